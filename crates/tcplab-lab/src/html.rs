//! The HTML report (`--report FILE.html` on `compare` and `reproduce`):
//! one self-contained file, readable offline in any browser. Styles are
//! inline, plots are inline SVG (the same charts as `--plot`), and nothing
//! is fetched from the network: no scripts, fonts, images or links to
//! other files.

use crate::compare::{join_settings, Comparison};
use crate::error::Result;
use crate::plot::{self, Chart};
use std::fmt::Write as _;

const STYLE: &str = "body{font-family:-apple-system,'Segoe UI',Roboto,'Noto Sans',sans-serif;max-width:1040px;\
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
h3{margin-top:1.4em}table{border-collapse:collapse;margin:.8em 0}\
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;font-variant-numeric:tabular-nums}\
th{background:#f3f3f3}td.n{text-align:right}\
.note{background:#fff6d6;border-left:4px solid #e0b000;padding:.4em 1em;margin:.6em 0}\
.ok{color:#17752f}.fail{color:#b3261e;font-weight:bold}\
pre,code{background:#f5f5f5;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em}\
pre{padding:.6em;overflow-x:auto;white-space:pre-wrap}\
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{color:#555;font-size:.9em}.muted{color:#666}";

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// A number, a range `[a, b]` or `a .. b`, or `-`: right-aligned in tables.
fn numeric(c: &str) -> bool {
    !c.is_empty()
        && c.chars().any(|ch| ch.is_ascii_digit())
        && c.chars().all(|ch| ch.is_ascii_digit() || " .,-+e[]".contains(ch))
}

/// An HTML document being built.
pub struct Page {
    title: String,
    body: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page { title: title.to_string(), body: String::new() }
    }

    /// Appends HTML as is.
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// `<tag>text</tag>` with `text` escaped.
    pub fn el(&mut self, tag: &str, text: &str) {
        let _ = writeln!(self.body, "<{tag}>{}</{tag}>", esc(text));
    }

    /// A table; cells are escaped.
    pub fn table(&mut self, head: &[&str], rows: &[Vec<String>]) {
        self.body.push_str("<table><thead><tr>");
        for h in head {
            let _ = write!(self.body, "<th>{}</th>", esc(h));
        }
        self.body.push_str("</tr></thead><tbody>\n");
        for r in rows {
            self.body.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                if i > 0 && numeric(c) {
                    let _ = write!(self.body, "<td class=\"n\">{}</td>", esc(c));
                } else {
                    let _ = write!(self.body, "<td>{}</td>", esc(c));
                }
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table>\n");
    }

    /// A chart as inline SVG with a caption.
    pub fn chart(&mut self, chart: &Chart) -> Result<()> {
        let svg = chart.to_svg()?;
        // Drop an XML declaration, if any: inline SVG starts at <svg.
        let svg = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
        let _ = writeln!(self.body, "<figure>{svg}</figure>");
        Ok(())
    }

    pub fn finish(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{}\
             <p class=\"muted\">Written by tcplab {}. Self-contained: no scripts, no network fetches.</p>\n\
             </body>\n</html>\n",
            esc(&self.title),
            self.body,
            crate::VERSION
        )
    }
}

/// The sections of one comparison: arms, per-metric tables and
/// distributions, every run, notes, and the first run of each arm.
pub fn comparison_sections(page: &mut Page, cmp: &Comparison, command: Option<&str>) -> Result<()> {
    let mut intro = format!(
        "<p>Scenario <code>{}</code>, {} run{} per arm on seeds 1 to {} (the same seeds in every arm).",
        esc(&cmp.scenario),
        cmp.runs,
        if cmp.runs == 1 { "" } else { "s" },
        cmp.runs
    );
    if let Some(d) = &cmp.description {
        let _ = write!(intro, " {}", esc(d));
    }
    intro.push_str("</p>\n");
    page.raw(&intro);
    if let Some(c) = command {
        page.raw(&format!("<pre>{}</pre>\n", esc(c)));
    }
    page.el("h2", "Arms");
    let mut rows = Vec::new();
    if !cmp.base.is_empty() {
        rows.push(vec!["(every arm, --set)".to_string(), join_settings(&cmp.base)]);
    }
    for a in &cmp.arms {
        let s = if a.settings.is_empty() { "(scenario as is)".to_string() } else { join_settings(&a.settings) };
        rows.push(vec![a.name.clone(), s]);
    }
    page.table(&["arm", "settings"], &rows);

    let charts = plot::compare_charts(cmp);
    for (i, m) in cmp.metrics.iter().enumerate() {
        let u = m.unit();
        page.el("h2", &format!("{} ({})", m.describe(), u.display));
        let rows: Vec<Vec<String>> = cmp
            .arms
            .iter()
            .filter_map(|a| {
                let s = a.summary[i].as_ref()?;
                Some(vec![
                    a.name.clone(),
                    s.n.to_string(),
                    u.show(s.min),
                    u.show(s.median),
                    u.show(s.mean),
                    u.show(s.max),
                    format!("[{}, {}]", u.show(s.ci95[0]), u.show(s.ci95[1])),
                ])
            })
            .collect();
        page.table(&["arm", "runs", "min", "median", "mean", "max", "95% CI of median"], &rows);
        if cmp.arms.len() >= 2 {
            let r = cmp.ratio_of_medians(i).map_or_else(|| "-".to_string(), |r| format!("{r:.4}"));
            page.raw(&format!(
                "<p>Ratio of medians {} / {}: <b>{}</b></p>\n",
                esc(&cmp.arms[1].name),
                esc(&cmp.arms[0].name),
                esc(&r)
            ));
        }
        if let Some((_, c)) = charts.iter().find(|(stem, _)| *stem == format!("dist-{}", plot::file_stem(&m.name))) {
            page.chart(c)?;
        }
    }
    let notes = cmp.notes();
    if !notes.is_empty() {
        page.el("h2", "Notes");
        for n in notes {
            page.raw(&format!("<p class=\"note\">{}</p>\n", esc(&n)));
        }
    }
    page.el("h2", "Every run");
    let mut head: Vec<String> = vec!["seed".into()];
    for m in &cmp.metrics {
        for a in &cmp.arms {
            head.push(format!("{} {} ({})", a.name, m.name, m.unit().display));
        }
    }
    let rows: Vec<Vec<String>> = (0..cmp.runs as usize)
        .map(|k| {
            let mut r =
                vec![cmp.arms.first().and_then(|a| a.runs.get(k)).map_or(String::new(), |r| r.seed.to_string())];
            for (i, m) in cmp.metrics.iter().enumerate() {
                for a in &cmp.arms {
                    r.push(a.runs.get(k).map_or("-".into(), |run| m.unit().show(run.values[i])));
                }
            }
            r
        })
        .collect();
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    page.table(&head_refs, &rows);
    let rest: Vec<&(String, Chart)> = charts.iter().filter(|(stem, _)| !stem.starts_with("dist-")).collect();
    if !rest.is_empty() {
        page.el("h2", "Over time: the first run of each arm");
        page.raw(
            "<p>Shaded: the sender's ca_state when not Open (Disorder, CWR, Recovery, Loss). \
             cwnd, ssthresh and in flight are in segments.</p>\n",
        );
        for (_, c) in rest {
            page.chart(c)?;
        }
    }
    Ok(())
}

/// The whole report of `compare`.
pub fn compare_report(cmp: &Comparison, command: Option<&str>) -> Result<String> {
    let names: Vec<&str> = cmp.arms.iter().map(|a| a.name.as_str()).collect();
    let title = format!("tcplab compare: {} ({})", cmp.scenario, names.join(" vs "));
    let mut page = Page::new(&title);
    page.el("h1", &title);
    comparison_sections(&mut page, cmp, command)?;
    Ok(page.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_escape() {
        assert_eq!(esc("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn test_page_is_self_contained() {
        let mut p = Page::new("t <1>");
        p.el("h1", "x");
        p.table(&["a", "b"], &[vec!["1".into(), "<2>".into()]]);
        let html = p.finish();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>t &lt;1&gt;</title>"));
        assert!(html.contains("<td>&lt;2&gt;</td>"));
        let mut p = Page::new("t");
        p.table(&["a", "b", "c"], &[vec!["x".into(), "1.5".into(), "[1, 2]".into()]]);
        assert!(p.finish().contains("<td>x</td><td class=\"n\">1.5</td><td class=\"n\">[1, 2]</td>"));
        for banned in ["<script", "<link", "src=", "@import", "url("] {
            assert!(!html.contains(banned), "{banned}");
        }
    }
}
