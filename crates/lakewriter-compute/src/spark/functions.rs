//! The functions of the `spark` dialect: `datafusion-spark`'s, lakewriter's own (below), and
//! those of DataFusion's whose answers are Spark's ([`SAME_AS_SPARK`], each a case of the
//! differential corpus). Any other function a query calls is refused at planning, naming it
//! ([`refused`]): it would run with other semantics than Spark's.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::StringArray;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, Expr, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::arith::{Mode, Op, spark_type_name};

/// DataFusion's functions that compute what Spark's of the same name do, for every argument
/// type Spark accepts (each proven so by the differential corpus, `tests/spark/corpus`).
const SAME_AS_SPARK: &[&str] = &[
    // Aggregates (where their answers still differ, the corpus lists the cases).
    "count",
    "min",
    "max",
    "sum",
    "avg",
    "stddev_pop",
    "stddev_samp",
    "var_pop",
    "var_samp",
    // Conditionals (`nvl` and `ifnull` are planned as `coalesce`, see `super::coerce`).
    "coalesce",
    "nvl",
    "ifnull",
    "nullif",
    "nanvl",
    "isnan",
    // Strings.
    "ascii",
    "bit_length",
    "btrim",
    "chr",
    "character_length",
    "char_length",
    "length",
    "concat",
    "concat_ws",
    "contains",
    "find_in_set",
    "instr",
    "strpos",
    "left",
    "levenshtein",
    "lower",
    "upper",
    "lpad",
    "rpad",
    "ltrim",
    "rtrim",
    "trim",
    "octet_length",
    "overlay",
    "regexp_like",
    "repeat",
    "replace",
    "reverse",
    "soundex",
    "starts_with",
    "ends_with",
    "split_part",
    "substr",
    "substring_index",
    "translate",
    "md5",
    "hex",
    "unhex",
    // Numbers, dates.
    "exp",
    "power",
    "pow",
    "datediff",
    "date_diff",
    "last_day",
    "weekday",
    "unix_micros",
];

/// The functions lakewriter adds to the dialect, in the session time zone `zone`.
pub(crate) fn own(zone: &'static str) -> Vec<Arc<ScalarUDF>> {
    let operators = OperatorFunction::all().into_iter().map(|f| Arc::new(ScalarUDF::new_from_impl(f)));
    operators
        .chain([Arc::new(ScalarUDF::new_from_impl(TypeOf::default()))])
        .chain(super::datetime::functions(zone))
        .chain(super::trunc::functions(zone))
        .chain(super::zones::functions(zone))
        .chain(super::math::functions())
        .chain(super::extremes::functions())
        .chain(super::strings::functions())
        .chain(super::months::functions(zone))
        .collect()
}

/// `datafusion-spark`'s functions whose answers the corpus shows to differ from Spark's: refused
/// like any function the dialect has no Spark-exact implementation of.
const NOT_AS_SPARK: &[&str] = &[
    // Pads to a width counted in bytes, where Java counts characters (`%8s` of `Ünïcödé`).
    "format_string",
    "printf",
];

/// The names of the functions the dialect runs: `datafusion-spark`'s (but [`NOT_AS_SPARK`]),
/// lakewriter's own and [`SAME_AS_SPARK`].
static ALLOWED: LazyLock<HashSet<String>> = LazyLock::new(|| {
    let mut names: HashSet<String> = SAME_AS_SPARK.iter().map(|n| (*n).to_owned()).collect();
    let own = own("UTC")
        .into_iter()
        .chain(super::round::functions(Mode::Ansi))
        .chain(super::epoch::functions(Mode::Ansi, "UTC"));
    for udf in datafusion_spark::all_default_scalar_functions().into_iter().chain(own) {
        names.insert(udf.name().to_owned());
        names.extend(udf.aliases().iter().cloned());
    }
    for udaf in datafusion_spark::all_default_aggregate_functions() {
        names.insert(udaf.name().to_owned());
        names.extend(udaf.aliases().iter().cloned());
    }
    for udwf in datafusion_spark::all_default_window_functions() {
        names.insert(udwf.name().to_owned());
        names.extend(udwf.aliases().iter().cloned());
    }
    for name in NOT_AS_SPARK {
        names.remove(*name);
    }
    // The window functions Spark and DataFusion define alike (ranking and offsets).
    names.extend(
        [
            "row_number",
            "rank",
            "dense_rank",
            "percent_rank",
            "cume_dist",
            "lag",
            "lead",
            "first_value",
            "last_value",
            "ntile",
        ]
        .map(String::from),
    );
    names
});

/// Fails on the first function `plan` calls that the dialect does not run, naming it.
pub(crate) fn refused(plan: &LogicalPlan) -> Result<()> {
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            refused_in(expr)?;
            Ok(TreeNodeRecursion::Continue)
        })
    })
    .map(drop)
}

/// Fails on the first function `expr` calls that the dialect does not run, naming it.
pub(crate) fn refused_in(expr: &Expr) -> Result<()> {
    let mut found: Option<String> = None;
    expr.apply(|e| {
        let (name, aliases) = match e {
            Expr::ScalarFunction(f) => (f.name(), f.func.aliases()),
            Expr::AggregateFunction(f) => (f.func.name(), f.func.aliases()),
            Expr::WindowFunction(f) => (f.fun.name(), &[][..]),
            _ => return Ok(TreeNodeRecursion::Continue),
        };
        if ALLOWED.contains(name) || name.starts_with("spark_") || aliases.iter().any(|a| ALLOWED.contains(a)) {
            return Ok(TreeNodeRecursion::Continue);
        }
        found = Some(name.to_owned());
        Ok(TreeNodeRecursion::Stop)
    })?;
    match found {
        None => Ok(()),
        Some(name) => Err(super::refused::refusal(&name)),
    }
}

/// The error refusing the function `name`.
/// Whether the dialect refuses the function `name` (lowercase) that a registry holds.
pub(crate) fn refused_name(name: &str) -> bool {
    !(ALLOWED.contains(name) || name.starts_with("spark_"))
}

/// The name a parsed call calls, lowercase: the last part of a qualified name, unquoted.
pub(crate) fn called(name: &datafusion::sql::sqlparser::ast::ObjectName) -> Option<String> {
    name.0.last().map(|part| part.to_string().trim_matches('`').to_lowercase())
}

/// A visitor of a parsed statement calling its closure with each function name it calls
/// ([`called`]).
pub(crate) struct Calls<'a>(pub(crate) &'a mut dyn FnMut(String));

impl datafusion::sql::sqlparser::ast::Visitor for Calls<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &datafusion::sql::sqlparser::ast::Expr) -> std::ops::ControlFlow<()> {
        if let datafusion::sql::sqlparser::ast::Expr::Function(call) = expr
            && let Some(name) = called(&call.name)
        {
            (self.0)(name);
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// A function of Spark's that is an arithmetic operator: `div` (`a div b`) and the `try_`
/// operators (`try_add`, `try_divide`, …), which give NULL where the operator would fail. The
/// SQL planner sees two operands; the dialect's analyzer ([`super::coerce`]) replaces each call
/// by the [`super::arith::SparkArithmetic`] of its operands' types, so a plan that skipped it fails.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OperatorFunction {
    name: &'static str,
    pub op: Op,
    /// `Some(Mode::Try)` for the `try_` functions; `None`: the session's mode.
    pub mode: Option<Mode>,
    signature: Signature,
}

impl OperatorFunction {
    fn new(name: &'static str, op: Op, mode: Option<Mode>) -> Self {
        Self { name, op, mode, signature: Signature::any(2, Volatility::Immutable) }
    }

    /// The functions, by name.
    fn all() -> [Self; 6] {
        [
            Self::new("div", Op::IntegralDivide, None),
            Self::new("try_add", Op::Add, Some(Mode::Try)),
            Self::new("try_subtract", Op::Subtract, Some(Mode::Try)),
            Self::new("try_multiply", Op::Multiply, Some(Mode::Try)),
            Self::new("try_divide", Op::Divide, Some(Mode::Try)),
            Self::new("try_mod", Op::Remainder, Some(Mode::Try)),
        ]
    }
}

impl ScalarUDFImpl for OperatorFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        // What the analyzer's call gives is typed there; the plan before it sees its operand's.
        Ok(match self.op {
            Op::IntegralDivide => DataType::Int64,
            Op::Divide => DataType::Float64,
            _ => args.first().cloned().unwrap_or(DataType::Null),
        })
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        exec_err!("`{}` planned without the spark dialect's analyzer", self.name)
    }
}

/// `plan` with each `typeof(x)` replaced by the name of `x`'s type, as Spark's analyzer folds it:
/// `x` is never computed (`typeof(tmax + tmax)` is `tinyint`, even where the sum overflows).
/// Applied once DataFusion's analyzer has typed the plan, so that the name is the type the value
/// has.
pub(crate) fn typeof_folded(plan: LogicalPlan) -> Result<LogicalPlan> {
    use datafusion::common::tree_node::Transformed;
    use datafusion::logical_expr::ExprSchemable;
    use datafusion::logical_expr::expr_rewriter::NamePreserver;
    let folded = plan.transform_up_with_subqueries(|node| {
        let schema = datafusion::logical_expr::utils::merge_schema(&node.inputs());
        let names = NamePreserver::new(&node);
        let rewritten = node.map_expressions(|e| {
            let name = names.save(&e);
            let folded = e.transform_up(|e| match e {
                Expr::ScalarFunction(call) if call.func.inner().downcast_ref::<TypeOf>().is_some() => {
                    let name = spark_type_name(&call.args[0].get_type(&schema)?);
                    Ok(Transformed::yes(Expr::Literal(ScalarValue::Utf8(Some(name)), None)))
                }
                other => Ok(Transformed::no(other)),
            })?;
            Ok(folded.update_data(|e| name.restore(e)))
        })?;
        if rewritten.transformed { rewritten.map_data(LogicalPlan::recompute_schema) } else { Ok(rewritten) }
    })?;
    Ok(folded.data)
}

/// Spark's `typeof(x)`: the name Spark gives the type of its argument (`decimal(6,6)`, `bigint`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeOf {
    signature: Signature,
}

impl Default for TypeOf {
    fn default() -> Self {
        Self { signature: Signature::any(1, Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for TypeOf {
    fn name(&self) -> &'static str {
        "typeof"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let name = spark_type_name(args.arg_fields[0].data_type());
        Ok(match &args.args[0] {
            ColumnarValue::Scalar(_) => ColumnarValue::Scalar(ScalarValue::Utf8(Some(name))),
            ColumnarValue::Array(array) => {
                ColumnarValue::Array(Arc::new(StringArray::from(vec![name.as_str(); array.len()])))
            }
        })
    }
}
