"""Flink SQL as a sqlglot dialect: Spark's grammar plus the parts Flink adds.

sqlglot has no Flink dialect; Flink SQL is close to Spark's (backquoted names, STRING, ``INTERVAL
'5' SECOND``), so this one extends Spark's parser with what Flink has and Spark lacks:

* ``WATERMARK FOR col AS expr`` inside CREATE TABLE (sqlglot's WatermarkColumnConstraint);
* computed columns ``name AS expr`` (a ComputedColumnConstraint without a type);
* ``PRIMARY KEY (...) NOT ENFORCED``;
* ``TABLE name`` as a function argument, as in ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...))``;
* plural interval units (``INTERVAL '10' SECONDS``);
* ``LATERAL TABLE(f(...))``, whose call is always a (user's table) function of that name, even where the
  name is also a built-in's (``split``).
* MATCH_RECOGNIZE with Flink's ``WITHIN interval`` after PATTERN, and its navigation functions FIRST and
  LAST kept with their offsets (``LAST(A.price, 1)``; Spark's parser reads them as its aggregates);
* ``MAP[...]`` as Flink's map constructor;
* STR_TO_MAP and the functions taking a date format (DATE_FORMAT, TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP,
  FROM_UNIXTIME) kept as written: Spark's parser adds its own delimiters, casts and format translations.

Statements that are not queries or DDL (SET, RESET, SHOW, EXPLAIN, EXECUTE STATEMENT SET) are
recognised by runtime.sql.statements before the parser sees them.
"""
from __future__ import annotations

import functools

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import TokenType

PLURAL_UNITS = {"SECONDS": "SECOND", "MINUTES": "MINUTE", "HOURS": "HOUR", "DAYS": "DAY",
                "MILLISECONDS": "MILLISECOND", "MONTHS": "MONTH", "YEARS": "YEAR", "WEEKS": "WEEK"}


def _as_written(name: str, args: list) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=args)


class FlinkParser(SparkParser):
    """Spark's parser plus Flink's DDL (WATERMARK, PRIMARY KEY NOT ENFORCED) and window TVF arguments."""
    CONSTRAINT_PARSERS = {
        **SparkParser.CONSTRAINT_PARSERS,
        "WATERMARK": lambda self: self.expression(
            exp.WatermarkColumnConstraint(
                this=self._match(TokenType.FOR) and self._parse_column(),
                expression=self._match(TokenType.ALIAS) and self._parse_disjunction(),
            )
        ),
    }
    SCHEMA_UNNAMED_CONSTRAINTS = {*SparkParser.SCHEMA_UNNAMED_CONSTRAINTS, "WATERMARK"}
    FUNCTIONS = {**SparkParser.FUNCTIONS,  # kept as written: Flink's meaning is not the one Spark's parser gives
                 **{name: functools.partial(_as_written, name)
                    for name in ("FIRST", "LAST", "STR_TO_MAP", "DATE_FORMAT", "TO_TIMESTAMP", "TO_DATE",
                                 "UNIX_TIMESTAMP", "FROM_UNIXTIME")}}
    _within: exp.Expr | None = None

    def _parse_match_recognize(self):
        """sqlglot's MATCH_RECOGNIZE plus Flink's ``WITHIN interval`` (set as the node's ``within``)."""
        self._within = None
        node = super()._parse_match_recognize()
        if node is not None and self._within is not None:
            node.set("within", self._within)
        return node

    def _match_text_seq(self, *texts: str, advance: bool = True) -> bool:
        # sqlglot looks for DEFINE right after PATTERN (...): Flink's WITHIN sits between the two
        if texts == ("DEFINE",) and self._curr and self._curr.text.upper() == "WITHIN":
            self._advance()
            self._within = self._parse_interval() or self._parse_primary()
        return super()._match_text_seq(*texts, advance=advance)

    def _parse_lambda(self, alias: bool = False):
        """``TABLE t`` as an argument of a table function (Flink's window TVFs)."""
        if self._curr and self._curr.token_type == TokenType.TABLE and self._next \
                and self._next.token_type in self.ID_VAR_TOKENS | {TokenType.VAR, TokenType.IDENTIFIER}:
            self._advance()
            table = self._parse_table_parts()
            # SESSION(TABLE t PARTITION BY k, ...)
            if self._match(TokenType.PARTITION_BY) or self._match_text_seq("PARTITION", "BY"):
                wrapped = self._match(TokenType.L_PAREN, advance=False)
                keys = self._parse_wrapped_csv(self._parse_column) if wrapped else [self._parse_column()]
                table.set("partition_by", keys)
            return table
        return super()._parse_lambda(alias)

    def _parse_lateral(self):
        """``LATERAL TABLE(name(args))``: the call parsed as written (an Anonymous call), never as a built-in."""
        if not (self._curr and self._curr.token_type == TokenType.LATERAL and self._next
                and self._next.token_type == TokenType.TABLE and self._index + 3 < len(self._tokens)
                and self._tokens[self._index + 2].token_type == TokenType.L_PAREN):
            return super()._parse_lateral()
        self._advance(3)  # LATERAL TABLE (
        call = self._parse_function(anonymous=True)
        self._match_r_paren()
        return self.expression(exp.Lateral(this=exp.Anonymous(this="TABLE", expressions=[call]),
                                           alias=self._parse_table_alias()))

    def _parse_bracket(self, this=None):
        """``MAP[k1, v1, ...]`` as the call MAP(k1, v1, ...) (not an element of a column named MAP)."""
        node = super()._parse_bracket(this)
        if not isinstance(node, exp.Bracket):
            return node
        return node.transform(lambda n: exp.Anonymous(this="MAP", expressions=n.expressions)
                              if isinstance(n, exp.Bracket) and isinstance(n.this, exp.Column) and not n.this.table
                              and n.this.name.upper() == "MAP" and not n.this.this.args.get("quoted") else n)

    def _parse_primary_key(self, wrapped_optional: bool = False, in_props: bool = False,
                           named_primary_key: bool = False):
        key = super()._parse_primary_key(wrapped_optional=wrapped_optional, in_props=in_props,
                                         named_primary_key=named_primary_key)
        if self._match_text_seq("NOT", "ENFORCED"):
            key.set("options", [exp.var("NOT ENFORCED")])
        return key

    def _parse_interval_span(self, this, parse_function_unit: bool = True):
        if self._curr and self._curr.text.upper() in PLURAL_UNITS:
            self._curr.text = PLURAL_UNITS[self._curr.text.upper()]
        return super()._parse_interval_span(this, parse_function_unit=parse_function_unit)


class FlinkTokenizer(Spark.Tokenizer):
    """Spark's tokenizer with Flink's string escapes and keywords (SESSION is a window TVF name)."""
    KEYWORDS = {**{k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k != "SESSION"},  # a window TVF here
                "BYTES": TokenType.VARBINARY, "ROW": TokenType.STRUCT, "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE}
    STRING_ESCAPES = ["'"]  # a backslash is an ordinary character in Flink strings ('\d+' is a regex)
    # tokens, not one string: runtime.sql.statements splits and recognises these (EXPLAIN of a statement set too)
    COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.EXECUTE, TokenType.SHOW, TokenType.COMMAND}


class Flink(Spark):
    """Flink SQL as a sqlglot dialect: parse with ``sqlglot.parse_one(text, read=Flink)``."""
    Tokenizer = FlinkTokenizer
    Parser = FlinkParser
