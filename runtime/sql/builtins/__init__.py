"""The built-in functions of Flink's "System (Built-in) Functions" page, one module per group of categories;
runtime.sql.functions holds them as the registry the planner asks."""
from runtime.sql.builtins import aggregate, arithmetic, collections, comparison, conditional, strings, temporal

FUNCTIONS = [*comparison.FUNCTIONS, *arithmetic.FUNCTIONS, *strings.FUNCTIONS, *temporal.FUNCTIONS,
             *conditional.FUNCTIONS, *collections.FUNCTIONS, *aggregate.FUNCTIONS]
