//! `tcplab packetdrill`: Linux's packetdrill scripts against the model.

use crate::terminal::emit;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_lab::{Error, EXIT_CHECK_FAILED, EXIT_OK};

#[derive(Args, Debug)]
pub(crate) struct PacketdrillArgs {
    /// .pkt files, and directories searched recursively for them.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// Print JSON Lines: {"type":"script","data":{...}} per script, then
    /// {"type":"summary","data":{...}}.
    #[arg(long)]
    json: bool,
    /// Notes, print() output and the event trace under each script.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Kernel HZ of the model: 100, 250 (the default), 300 or 1000.
    #[arg(long, value_name = "N")]
    hz: Option<u32>,
    /// Diagnostic: do not compare this outbound field (tcp_psh, tcp_window, ...);
    /// such results are not packetdrill-conformant. Repeatable.
    #[arg(long = "ignore-field", value_name = "NAME")]
    ignore_field: Vec<String>,
}

pub(crate) fn run(a: PacketdrillArgs) -> Result<ExitCode, Error> {
    if let Some(hz) = a.hz {
        tcplab_packetdrill::check_hz(hz).map_err(|rule| Error::at("--hz", rule))?;
    }
    let scripts = tcplab_packetdrill::collect_scripts(&a.paths).map_err(|e| Error::msg(e.to_string()))?;
    if scripts.is_empty() {
        let paths: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::msg(format!("no .pkt scripts under {}", paths.join(", "))));
    }
    let opts = tcplab_packetdrill::RunOptions { verbose: a.verbose, hz: a.hz, ignore_fields: a.ignore_field };
    let results: Vec<_> = scripts.iter().map(|p| tcplab_packetdrill::run_script_with(p, &opts)).collect();
    emit(&if a.json {
        tcplab_packetdrill::format_json_lines(&results)
    } else {
        tcplab_packetdrill::format_table(&results, opts.verbose)
    })?;
    let failed = results.iter().any(tcplab_packetdrill::ScriptResult::failed);
    Ok(ExitCode::from(if failed { EXIT_CHECK_FAILED } else { EXIT_OK }))
}
