//! Results as Arrow tables, handed to Python through the Arrow PyCapsule
//! interface: [`Table`] implements `__arrow_c_stream__` (and
//! `__arrow_c_schema__`), so `pyarrow.table(t)`, `polars.DataFrame(t)` and
//! anything else that speaks the Arrow C stream interface take its columns
//! as they are, buffer by buffer, with no copy row by row and no Python
//! object per value.
//!
//! Tables are built column by column from the lab's results with
//! [`Columns`]: typed vectors become Arrow arrays without conversion, and
//! repeated strings (a trace's flow id, a congestion-avoidance state)
//! become dictionary columns (`pandas.Categorical`), one small string
//! array plus an integer per row.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int32Array, RecordBatch, RecordBatchIterator, StringArray,
    UInt32Array, UInt64Array,
};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{Field, Schema, SchemaRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::ffi::CString;
use std::sync::Arc;

/// A column's values, as the lab has them.
pub enum Col {
    F64(Vec<f64>),
    OptF64(Vec<Option<f64>>),
    U64(Vec<u64>),
    OptU64(Vec<Option<u64>>),
    U32(Vec<u32>),
    OptU32(Vec<Option<u32>>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    OptStr(Vec<Option<String>>),
    /// A dictionary column: row `i` is `values[keys[i]]`.
    Dict {
        keys: Vec<i32>,
        values: Vec<String>,
    },
}

impl Col {
    fn array(self) -> ArrayRef {
        match self {
            Col::F64(v) => Arc::new(Float64Array::from(v)),
            Col::OptF64(v) => Arc::new(Float64Array::from(v)),
            Col::U64(v) => Arc::new(UInt64Array::from(v)),
            Col::OptU64(v) => Arc::new(UInt64Array::from(v)),
            Col::U32(v) => Arc::new(UInt32Array::from(v)),
            Col::OptU32(v) => Arc::new(UInt32Array::from(v)),
            Col::Bool(v) => Arc::new(BooleanArray::from(v)),
            Col::Str(v) => Arc::new(StringArray::from(v)),
            Col::OptStr(v) => Arc::new(StringArray::from(v)),
            Col::Dict { keys, values } => {
                let values: ArrayRef = Arc::new(StringArray::from(values));
                Arc::new(DictionaryArray::<Int32Type>::new(Int32Array::from(keys), values))
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Col::F64(v) => v.len(),
            Col::OptF64(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::OptU64(v) => v.len(),
            Col::U32(v) => v.len(),
            Col::OptU32(v) => v.len(),
            Col::Bool(v) => v.len(),
            Col::Str(v) => v.len(),
            Col::OptStr(v) => v.len(),
            Col::Dict { keys, .. } => keys.len(),
        }
    }
}

/// A table under construction: named columns of equal length.
#[derive(Default)]
pub struct Columns {
    cols: Vec<(String, Col)>,
}

impl Columns {
    pub fn new() -> Columns {
        Columns::default()
    }

    pub fn push(&mut self, name: impl Into<String>, col: Col) -> &mut Columns {
        self.cols.push((name.into(), col));
        self
    }

    /// The finished table.
    pub fn finish(self) -> Table {
        let rows = self.cols.first().map_or(0, |(_, c)| c.len());
        debug_assert!(self.cols.iter().all(|(_, c)| c.len() == rows), "columns of unequal length");
        let mut fields = Vec::with_capacity(self.cols.len());
        let mut arrays = Vec::with_capacity(self.cols.len());
        for (name, col) in self.cols {
            let a = col.array();
            fields.push(Field::new(name, a.data_type().clone(), a.null_count() > 0 || a.is_nullable()));
            arrays.push(a);
        }
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let batch = if arrays.is_empty() {
            RecordBatch::new_empty(Arc::clone(&schema))
        } else {
            // The fields were made from the arrays, so they agree.
            RecordBatch::try_new(Arc::clone(&schema), arrays).expect("columns agree with their fields")
        };
        Table { schema, batches: vec![batch], rows }
    }
}

/// An Arrow table of a tcplab result. Convert it with `pyarrow.table(t)`,
/// `polars.DataFrame(t)` (or `polars.from_arrow`), or through the
/// `tcplab` result objects, which give pandas DataFrames. It implements
/// the Arrow PyCapsule interface (`__arrow_c_stream__`); the data is
/// shared with the consumer, not copied value by value.
#[pyclass(module = "tcplab._native", name = "ArrowTable", frozen)]
pub struct Table {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    rows: usize,
}

#[pymethods]
impl Table {
    /// Number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.rows
    }

    /// The columns' names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __len__(&self) -> usize {
        self.rows
    }

    fn __repr__(&self) -> String {
        let cols: Vec<String> =
            self.schema.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
        format!("<tcplab ArrowTable: {} rows; {}>", self.rows, cols.join(", "))
    }

    /// The Arrow C stream of this table, in a PyCapsule named
    /// "arrow_array_stream" (the Arrow PyCapsule interface). A requested
    /// schema is not supported: the table's own is always used, and the
    /// consumer casts if it wants another.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(self.batches.clone().into_iter().map(Ok), Arc::clone(&self.schema));
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        let name = CString::new("arrow_array_stream").expect("no NUL");
        PyCapsule::new(py, stream, Some(name))
    }

    /// The table's schema as an Arrow C schema, in a PyCapsule named
    /// "arrow_schema".
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| PyValueError::new_err(format!("cannot export the schema: {e}")))?;
        let name = CString::new("arrow_schema").expect("no NUL");
        PyCapsule::new(py, schema, Some(name))
    }
}

/// Dictionary keys for `names` (each distinct name once, in order of first
/// appearance).
pub struct Interner {
    pub values: Vec<String>,
    index: std::collections::HashMap<String, i32>,
}

impl Interner {
    pub fn new() -> Interner {
        Interner { values: Vec::new(), index: std::collections::HashMap::new() }
    }

    pub fn key(&mut self, name: &str) -> i32 {
        if let Some(&k) = self.index.get(name) {
            return k;
        }
        let k = i32::try_from(self.values.len()).expect("fewer than 2^31 distinct names");
        self.values.push(name.to_string());
        self.index.insert(name.to_string(), k);
        k
    }
}
