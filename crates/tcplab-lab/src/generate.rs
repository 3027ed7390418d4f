//! What the generators (`[topology]`, `[traffic]`) share: they are
//! shorthand for `[[node]]`, `[[link]]` and `[[flow]]` tables, so they
//! write those tables into the scenario tree and the schema validates the
//! result exactly as if the user had written it. Every generated value
//! carries the origin of the generator field that produced it, so an
//! error in, say, `topology.host_link.rate` is reported at that line.

use crate::error::Result;
use crate::field::{join, F, T};
use crate::tree::{Entry, Node, Origin, Table, Tree, Value};
use crate::{topology, traffic};

/// The tree with `[topology]` and `[traffic]` replaced by the tables they
/// stand for, or `None` when the scenario uses neither.
pub(crate) fn expand(tree: &Tree) -> Result<Option<Tree>> {
    let Value::Table(root) = &tree.root.value else { return Ok(None) };
    if root.get("topology").is_none() && root.get("traffic").is_none() {
        return Ok(None);
    }
    let mut out = tree.clone();
    topology::expand(&mut out)?;
    traffic::expand(&mut out)?;
    Ok(Some(out))
}

/// The generator's table `key` of the root, removed from the tree, with
/// its origin; `None` if absent.
pub(crate) fn take(tree: &mut Tree, key: &str) -> Option<Entry> {
    let Value::Table(root) = &mut tree.root.value else { return None };
    let i = root.entries.iter().position(|e| e.key == key)?;
    Some(root.entries.remove(i))
}

/// The generator's table as a typed view, for reading its fields.
pub(crate) fn view<'a>(tree: &'a Tree, entry: &'a Entry, what: &str) -> Result<T<'a>> {
    F { src: &tree.source, node: &entry.node, path: &entry.key }.table(what)
}

/// Appends `tables` to the root array `key` (`node`, `link`, `flow`),
/// creating it if the file has none. If the file's `key` is not an array
/// the tables are dropped: validation reports the file's error anyway.
pub(crate) fn append(tree: &mut Tree, key: &str, origin: &Origin, tables: Vec<Table>) {
    let Value::Table(root) = &mut tree.root.value else { return };
    let nodes = tables.into_iter().map(|t| Node { value: Value::Table(t), origin: origin.clone() });
    match root.entries.iter_mut().find(|e| e.key == key) {
        Some(e) => {
            if let Value::Array(a) = &mut e.node.value {
                a.extend(nodes);
            }
        }
        None => root.entries.push(Entry {
            key: key.to_string(),
            key_origin: origin.clone(),
            node: Node { value: Value::Array(nodes.collect()), origin: origin.clone() },
        }),
    }
}

/// Builds generated tables: each value gets the origin of the generator
/// field it came from.
pub(crate) struct TableBuilder {
    table: Table,
}

impl TableBuilder {
    /// Starts from a template the user wrote (`host_link = { ... }`), or
    /// an empty table.
    pub(crate) fn from(template: Option<&Table>) -> TableBuilder {
        TableBuilder { table: template.cloned().unwrap_or_default() }
    }

    pub(crate) fn set(mut self, key: &str, value: Value, origin: &Origin) -> TableBuilder {
        let node = Node { value, origin: origin.clone() };
        match self.table.entries.iter_mut().find(|e| e.key == key) {
            Some(e) => e.node = node,
            None => self.table.entries.push(Entry { key: key.to_string(), key_origin: origin.clone(), node }),
        }
        self
    }

    pub(crate) fn str(self, key: &str, value: impl Into<String>, origin: &Origin) -> TableBuilder {
        self.set(key, Value::String(value.into()), origin)
    }

    pub(crate) fn build(self) -> Table {
        self.table
    }
}

/// A template table (`host_link`, `traffic.flow`, ...) that must not set
/// the keys the generator sets itself.
pub(crate) fn template<'a>(t: &T<'a>, key: &str, generated: &[&str]) -> Result<Option<&'a Table>> {
    let Some(e) = t.table.get(key) else { return Ok(None) };
    let Value::Table(tpl) = &e.node.value else {
        let found = e.node.value.type_name();
        return Err(t.src.error(
            &e.node.origin,
            &join(t.path, key),
            format!("expected a table of settings, found {found}"),
        ));
    };
    for e in &tpl.entries {
        if generated.contains(&e.key.as_str()) {
            let path = format!("{}.{}", join(t.path, key), e.key);
            return Err(t.src.error(
                &e.key_origin,
                &path,
                format!("is set by the generator (it sets {}); remove it", generated.join(", ")),
            ));
        }
    }
    Ok(Some(tpl))
}
