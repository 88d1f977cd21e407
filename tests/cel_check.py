"""CEL compiled as the Kubernetes API server (v1.36) compiles the expressions of admission policies: a judge for the
tests, held to the recorded verdicts of a real server (tests/test_cel_vectors.py).

Parsing and type checking are Google's cel-expr-python (cel-cpp underneath). What the API server enforces beyond
that is added here, over the checked AST that cel-expr-python serialises (a `cel.expr.CheckedExpr`):

- homogeneous aggregate literals (cel-go's `ValidateHomogeneousAggregateLiterals`, which the Kubernetes base
  environment enables): in a list literal every element, in a map literal every key and every value, must have
  the type of the first one, as a type equivalence (`dyn` is equivalent to `dyn` only); a list reports its first
  mismatch, a map every one; literals within a `format()` call are exempt. The checker itself types a mixed
  literal as dyn-valued (cel-expr-python does too), which is why the server's messages read `map(string, dyn)`;
- the type each expression must have (`must evaluate to bool but got dyn`): bool for validations and match
  conditions, string for messageExpression, string or null for an audit annotation, list(JSONPatch) for a JSON
  patch, Object for an apply configuration; any type for a variable, whose type is then that of
  `variables.<name>` for the expressions after it;
- the admission environment: `object`, `oldObject` (and `params` with a paramKind) dyn, `request` a
  kubernetes.AdmissionRequest and `namespaceObject` a kubernetes.Namespace (the fields the API server declares),
  the strings extension (version 2) and optionals; in mutating policies the JSONPatch type (op, path, from:
  string; value: dyn) and the ApplyConfiguration types `Object`, `Object.<field>...`, whose every field is dyn;
  and, as declarations, the Kubernetes libraries the policies here may use: quantity (its 1.29 functions),
  lists (but its `indexOf` and `lastIndexOf` on lists: cel-expr-python cannot add overloads to the strings
  extension's functions of those names), regex and `jsonpatch.escapeKey`. Other Kubernetes libraries (URLs, IP,
  CIDR, format, semver, authorizer, sets) are not declared: an expression using them is refused here, though the
  server accepts it.

A DeviceClass selector is checked in the DRA environment: `device.driver`, `device.attributes` (domain -> name ->
dyn), `device.capacity` (domain -> name -> Quantity), `device.allowMultipleAllocations`, must be bool.

A CRD's `x-kubernetes-validations` rule is compiled in the "crd" environment: `self` and `oldSelf` dyn (the server
types them from the schema; tests/crd_validation.py gives them values converted from the schema as the server does),
the same libraries. Of the library functions only `find` (regex.go: the leftmost match of an RE2 pattern, or "") and
`jsonpatch.escapeKey` have implementations here, so only expressions using those (and the standard functions) can be
evaluated.

Error messages and positions are the server's (`ERROR: <input>:LINE:COL: ...`, columns from 1); those that come
from cel-expr-python's checker keep its wording, which can differ from cel-go's, at the same position.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    json_format,
    message_factory,
    struct_pb2,
    timestamp_pb2,
)

from tests.conftest import repo_script

STRINGS_VERSION = 2
"""The strings extension version of the Kubernetes base environment since 1.29."""

# --- protobuf messages, from proto source -------------------------------------------------------------------

F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"string": F.TYPE_STRING, "bool": F.TYPE_BOOL, "int32": F.TYPE_INT32, "int64": F.TYPE_INT64}


def proto_file(name: str, package: str, source: str, imports: Sequence[Any] = ()) -> descriptor_pb2.FileDescriptorProto:
    """A proto3 file of messages from their source: nested messages, oneofs, `repeated` and `map<K, V>` fields;
    a field's message type is named as in a .proto file (the pool resolves it)."""
    tokens = re.findall(r"[A-Za-z_.][\w.]*|\d+|[{}<>=;,]", source)
    tokens.reverse()
    file = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3",
                                              dependency=[d.name for d in imports])  # fmt: skip

    def take(expected: str | None = None) -> str:
        token = tokens.pop()
        assert expected in (None, token), (expected, token)
        return token

    def message(into: Any) -> None:
        m = into.add(name=take())
        take("{")
        while tokens[-1] != "}":
            if tokens[-1] == "message":
                take()
                message(m.nested_type)
            elif tokens[-1] == "oneof":
                take()
                m.oneof_decl.add(name=take())
                take("{")
                while tokens[-1] != "}":
                    field(m, len(m.oneof_decl) - 1)
                take("}")
            else:
                field(m, None)
        take("}")

    def field(m: Any, oneof: int | None) -> None:
        label = F.LABEL_REPEATED if tokens[-1] == "repeated" and take() else F.LABEL_OPTIONAL
        if tokens[-1] == "map":
            take(), take("<")
            key, _, value, _ = take(), take(","), take(), take(">")
            fname = take()
            entry = m.nested_type.add(name="".join(p.title() for p in fname.split("_")) + "Entry")
            entry.options.map_entry = True
            typed(entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL), key)
            typed(entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL), value)
            ftype, label = entry.name, F.LABEL_REPEATED
        else:
            ftype, fname = take(), take()
        take("=")
        f = m.field.add(name=fname, number=int(take()), label=label)
        typed(f, ftype)
        if oneof is not None:
            f.oneof_index = oneof
        take(";")

    def typed(f: Any, ftype: str) -> None:
        if ftype in _SCALARS:
            f.type = _SCALARS[ftype]
        else:
            f.type_name = ftype

    while tokens:
        take("message")
        message(file.message_type)
    return file


_WELL_KNOWN = [struct_pb2.DESCRIPTOR, timestamp_pb2.DESCRIPTOR]

CEL_EXPR = """
message Empty {}
message Constant {}
message Expr {
  int64 id = 2;
  oneof expr_kind {
    Constant const_expr = 3; Ident ident_expr = 4; Select select_expr = 5; Call call_expr = 6;
    CreateList list_expr = 7; CreateStruct struct_expr = 8; Comprehension comprehension_expr = 9;
  }
  message Ident { string name = 1; }
  message Select { Expr operand = 1; string field = 2; bool test_only = 3; }
  message Call { Expr target = 1; string function = 2; repeated Expr args = 3; }
  message CreateList { repeated Expr elements = 1; repeated int32 optional_indices = 2; }
  message CreateStruct {
    string message_name = 1;
    repeated Entry entries = 2;
    message Entry {
      int64 id = 1;
      oneof key_kind { string field_key = 2; Expr map_key = 3; }
      Expr value = 4;
      bool optional_entry = 5;
    }
  }
  message Comprehension {
    string iter_var = 1; Expr iter_range = 2; string accu_var = 3; Expr accu_init = 4; Expr loop_condition = 5;
    Expr loop_step = 6; Expr result = 7; string iter_var2 = 8;
  }
}
message SourceInfo { repeated int32 line_offsets = 3; map<int64, int32> positions = 4; }
message Type {
  oneof type_kind {
    Empty dyn = 1; int32 null = 2; int32 primitive = 3; int32 wrapper = 4; int32 well_known = 5;
    ListType list_type = 6; MapType map_type = 7; string message_type = 9; string type_param = 10; Type type = 11;
    Empty error = 12; AbstractType abstract_type = 14;
  }
  message ListType { Type elem_type = 1; }
  message MapType { Type key_type = 1; Type value_type = 2; }
  message AbstractType { string name = 1; repeated Type parameter_types = 2; }
}
message ParsedExpr { Expr expr = 2; SourceInfo source_info = 3; }
message CheckedExpr { map<int64, Type> type_map = 3; Expr expr = 4; SourceInfo source_info = 5; }
"""
"""The parts of cel-spec's syntax.proto and checked.proto read here, with their field numbers (its enums are
int32 here, which has the same wire form; Type's `function` is left out)."""

ADMISSION = """
message GroupVersionKind { string group = 1; string version = 2; string kind = 3; }
message GroupVersionResource { string group = 1; string version = 2; string resource = 3; }
message UserInfo {
  string username = 1; string uid = 2; repeated string groups = 3;
  map<string, google.protobuf.ListValue> extra = 4;
}
message AdmissionRequest {
  GroupVersionKind kind = 1; GroupVersionResource resource = 2; string subResource = 3;
  GroupVersionKind requestKind = 4; GroupVersionResource requestResource = 5; string requestSubResource = 6;
  string name = 7; string namespace = 8; string operation = 9; UserInfo userInfo = 10; bool dryRun = 11;
  google.protobuf.Value options = 12;
}
message Namespace {
  NamespaceMetadata metadata = 1; NamespaceSpec spec = 2; NamespaceStatus status = 3;
}
message NamespaceMetadata {
  string name = 1; string generateName = 2; string namespace = 3; map<string, string> labels = 4;
  map<string, string> annotations = 5; string UID = 6; google.protobuf.Timestamp creationTimestamp = 7;
  int64 deletionGracePeriodSeconds = 8; google.protobuf.Timestamp deletionTimestamp = 9; int64 generation = 10;
  string resourceVersion = 11; repeated string finalizers = 12;
}
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { repeated NamespaceCondition conditions = 1; string phase = 2; }
message NamespaceCondition {
  string status = 1; string type = 2; google.protobuf.Timestamp lastTransitionTime = 3; string message = 4;
  string reason = 5;
}
"""
"""The types the API server declares for admission (k8s.io/apiserver/pkg/admission/plugin/cel/compile.go): the
request (without uid, object and oldObject) and the namespace. UserInfo.extra, a map of string lists there, is a
map of JSON lists here."""

JSON_PATCH = "message JSONPatch { string op = 1; string path = 2; string from = 3; google.protobuf.Value value = 4; }"
"""mutation/jsonpatch.go's JSONPatch: its value is any JSON value (dyn)."""

_EXPR_POOL = descriptor_pool.DescriptorPool()
_EXPR_POOL.Add(proto_file("cel/expr/subset.proto", "cel.expr", CEL_EXPR))
CheckedExpr = message_factory.GetMessageClass(_EXPR_POOL.FindMessageTypeByName("cel.expr.CheckedExpr"))
ParsedExpr = message_factory.GetMessageClass(_EXPR_POOL.FindMessageTypeByName("cel.expr.ParsedExpr"))


@functools.cache
def _pool(objects: tuple[tuple[str, tuple[str, ...]], ...]) -> descriptor_pool.DescriptorPool:
    """Admission's types, JSONPatch, and the apply configuration types of an expression, by their renamed names
    (`Object_spec` for `Object.spec`, see `_rename_objects`), each with the fields the expression sets, all dyn."""
    pool = descriptor_pool.DescriptorPool()
    for d in _WELL_KNOWN:
        pool.AddSerializedFile(d.serialized_pb)
    pool.Add(proto_file("kubernetes/admission.proto", "kubernetes", ADMISSION, _WELL_KNOWN))
    fields = (" ".join(f"google.protobuf.Value {f} = {i};" for i, f in enumerate(names, 1)) for _, names in objects)
    types = "".join(f"message {name} {{ {body} }}\n" for (name, _), body in zip(objects, fields, strict=True))
    pool.Add(proto_file("kubernetes/patch.proto", "", JSON_PATCH + "\n" + types, _WELL_KNOWN))
    return pool


def admission_message(type_name: str, fields: Mapping[str, Any]) -> Any:
    """A kubernetes.* message (e.g. AdmissionRequest) for evaluation, from JSON-like fields."""
    pool = _pool(())
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"kubernetes.{type_name}"))
    return json_format.ParseDict(fields, cls(), descriptor_pool=pool)


# --- the environments ---------------------------------------------------------------------------------------

QUANTITY = "kubernetes.Quantity"
_ORDERED = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_LIBRARY = {
    # k8s.io/apiserver/pkg/cel/library: quantity.go (the functions of Kubernetes 1.29), lists.go, regex.go.
    # Function -> overloads: (id, receiver type or None for a global function, argument types, result type).
    "quantity": [("string_to_quantity", None, ["string"], QUANTITY)],
    "isQuantity": [("is_quantity_string", None, ["string"], "bool")],
    "sign": [("quantity_sign", None, [QUANTITY], "int")],  # a global function there, whatever its doc says
    "isGreaterThan": [("quantity_is_greater_than", QUANTITY, [QUANTITY], "bool")],
    "isLessThan": [("quantity_is_less_than", QUANTITY, [QUANTITY], "bool")],
    "compareTo": [("quantity_compare_to", QUANTITY, [QUANTITY], "int")],
    "asApproximateFloat": [("quantity_get_float", QUANTITY, [], "double")],
    "asInteger": [("quantity_get_int", QUANTITY, [], "int")],
    "isInteger": [("quantity_is_integer", QUANTITY, [], "bool")],
    "add": [("quantity_add", QUANTITY, [QUANTITY], QUANTITY), ("quantity_add_int", QUANTITY, ["int"], QUANTITY)],
    "sub": [("quantity_sub", QUANTITY, [QUANTITY], QUANTITY), ("quantity_sub_int", QUANTITY, ["int"], QUANTITY)],
    "isSorted": [(f"list_{t}_is_sorted_bool", f"list({t})", [], "bool") for t in _ORDERED],
    "sum": [(f"list_{t}_sum_{t}", f"list({t})", [], t) for t in ("int", "uint", "double", "duration")],
    "max": [(f"list_{t}_max_{t}", f"list({t})", [], t) for t in _ORDERED],
    "min": [(f"list_{t}_min_{t}", f"list({t})", [], t) for t in _ORDERED],
    "find": [("string_find_string", "string", ["string"], "string")],
    "findAll": [
        ("string_find_all_string", "string", ["string"], "list(string)"),
        ("string_find_all_string_int", "string", ["string", "int"], "list(string)"),
    ],
}
_ESCAPE_KEY = {"jsonpatch.escapeKey": [("string_jsonpatch_escapeKey_string", None, ["string"], "string")]}
"""mutation's JSONPatch library (library/jsonpatch.go): in mutating policies."""


def escape_key(key: str) -> str:
    """`jsonpatch.escapeKey`: '~' and '/' as JSON Pointer escapes, in one pass."""
    return key.replace("~", "~0").replace("/", "~1")


@functools.cache
def re2(pattern: str) -> re.Pattern[str]:
    """A Go RE2 pattern as Python's `re` compiles it, translated as the CRD schemas' patterns are
    (tools/gen_crd_schemas.py), which refuses what it cannot translate exactly."""
    return re.compile(repo_script("tools/gen_crd_schemas.py").python_pattern(pattern))


def regex_find(text: str, pattern: str) -> str:
    """`find`: the leftmost match of the RE2 `pattern` in `text`, or "" (Go's FindString)."""
    match = re2(pattern).search(text)
    return match.group(0) if match else ""


_IMPLEMENTATIONS = {"string_jsonpatch_escapeKey_string": escape_key, "string_find_string": regex_find}
"""The library functions the tests evaluate (the others are declarations only): `jsonpatch.escapeKey` in the
recorded policies, `find` in the CRD rules of node provisioning."""


def _functions(library: Mapping[str, list]) -> list[cel.FunctionDecl]:
    return [
        cel.FunctionDecl(
            name,
            [
                cel.Overload(
                    oid,
                    _type(result),
                    [_type(t) for t in ([receiver] if receiver else []) + args],
                    is_member=receiver is not None,
                    impl=_IMPLEMENTATIONS.get(oid),
                )
                for oid, receiver, args, result in overloads
            ],
        )
        for name, overloads in library.items()
    ]


_PRIMITIVES = {
    "bool": cel.Type.BOOL,
    "int": cel.Type.INT,
    "uint": cel.Type.UINT,
    "double": cel.Type.DOUBLE,
    "string": cel.Type.STRING,
    "bytes": cel.Type.BYTES,
    "dyn": cel.Type.DYN,
    "null": cel.Type.NULL,
    "duration": cel.Type.DURATION,
    "timestamp": cel.Type.TIMESTAMP,
}


def _type(spelled: str) -> cel.Type:
    """A cel.Type from `format_type`'s spelling."""
    spelled = spelled.strip()
    if spelled in _PRIMITIVES:
        return _PRIMITIVES[spelled]
    if spelled == QUANTITY:
        return cel.Type.AbstractType(QUANTITY)
    m = re.fullmatch(r"(list|map|optional_type|type)\((.*)\)", spelled)
    if m is None:
        return cel.Type(spelled)  # a message
    args = _split_args(m.group(2))
    if m.group(1) == "list":
        return cel.Type.List(_type(args[0]))
    if m.group(1) == "map":
        return cel.Type.Map(_type(args[0]), _type(args[1]))
    if m.group(1) == "type":
        return cel.Type.Type(_type(args[0]))
    return cel.Type.AbstractType("optional_type", [_type(args[0])])


def _split_args(text: str) -> list[str]:
    depth, start, out = 0, 0, []
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]]


@dataclass(frozen=True)
class Context:
    """What an expression is compiled against."""

    kind: str
    """"validating", "mutating" (with the patch types and jsonpatch library), "device" (a DRA selector) or "crd" (a
    CRD validation rule)."""
    params: bool = False
    variables: tuple[tuple[str, str], ...] = ()
    """(name, type as `format_type` spells it) of the policy's variables compiled before the expression."""


@functools.cache
def _env(ctx: Context, objects: tuple[tuple[str, tuple[str, ...]], ...]) -> Any:
    strings = ext_strings.ExtStrings(STRINGS_VERSION)
    if ctx.kind == "crd":
        return cel.NewEnv(
            _pool(objects),
            variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
            extensions=[ext_optional.ExtOptional(), strings],
            functions=_functions(_LIBRARY),
        )
    if ctx.kind == "device":
        declared = {
            "device.driver": "string",
            "device.attributes": "map(string, map(string, dyn))",
            "device.capacity": f"map(string, map(string, {QUANTITY}))",
            "device.allowMultipleAllocations": "bool",
        }
        return cel.NewEnv(
            _pool(objects),
            variables={k: _type(v) for k, v in declared.items()},
            extensions=[ext_optional.ExtOptional(), strings, ext_bindings.ExtBindings()],
            functions=_functions(_LIBRARY),
        )
    declared = {
        "object": "dyn",
        "oldObject": "dyn",
        "request": "kubernetes.AdmissionRequest",
        "namespaceObject": "kubernetes.Namespace",
    }
    if ctx.params:
        declared["params"] = "dyn"
    declared.update((f"variables.{name}", t) for name, t in ctx.variables)
    library = {**_LIBRARY, **(_ESCAPE_KEY if ctx.kind == "mutating" else {})}
    return cel.NewEnv(
        _pool(objects),
        variables={k: _type(v) for k, v in declared.items()},
        extensions=[ext_optional.ExtOptional(), strings],
        functions=_functions(library),
    )


# --- ApplyConfiguration types --------------------------------------------------------------------------------

_STRING = "(?:[rR][bB]?|[bB][rR]?)?(?:" + "|".join([
    r"'''(?:\\.|[^\\])*?'''", r'"""(?:\\.|[^\\])*?"""', r"'(?:\\.|[^'\\\n])*'", r'"(?:\\.|[^"\\\n])*"',
]) + ")"  # fmt: skip
"""A CEL string literal: raw or bytes, in single, double or triple quotes."""
_OBJECT_TYPE = re.compile(rf"(?P<skip>{_STRING}|//[^\n]*)|(?<![\w.])Object(?:\.[A-Za-z_]\w*)*(?=\s*\{{)")
OBJECT_PREFIX = "Object_"


def _rename_objects(expression: str) -> str:
    """The expression with each apply configuration type name (`Object`, `Object.spec.containers`) written with
    underscores (`Object_spec_containers`), the same length, so that positions stay: a protobuf message cannot
    be named both as a type and as a field of its parent, as `Object.spec` is."""
    return _OBJECT_TYPE.sub(lambda m: m.group(0) if m.group("skip") else m.group(0).replace(".", "_"), expression)


def _object_types(parsed: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(renamed type, the fields set on it) of every apply configuration struct in a parsed expression."""
    found: dict[str, set[str]] = {}
    for e in _walk(parsed.expr):
        if e.WhichOneof("expr_kind") == "struct_expr" and e.struct_expr.message_name:
            name = e.struct_expr.message_name.lstrip(".")
            if name == "Object" or name.startswith(OBJECT_PREFIX):
                found.setdefault(name, set()).update(x.field_key for x in e.struct_expr.entries)
    return tuple((k, tuple(sorted(v))) for k, v in sorted(found.items()))


def _walk(e: Any) -> Iterator[Any]:
    yield e
    for child in _children(e):
        yield from _walk(child)


def _children(e: Any) -> list[Any]:
    kind = e.WhichOneof("expr_kind")
    if kind == "select_expr":
        return [e.select_expr.operand]
    if kind == "call_expr":
        return ([e.call_expr.target] if e.call_expr.HasField("target") else []) + list(e.call_expr.args)
    if kind == "list_expr":
        return list(e.list_expr.elements)
    if kind == "struct_expr":
        out = []
        for entry in e.struct_expr.entries:
            out += [entry.map_key] if entry.HasField("map_key") else []
            out.append(entry.value)
        return out
    if kind == "comprehension_expr":
        c = e.comprehension_expr
        return [c.iter_range, c.accu_init, c.loop_condition, c.loop_step, c.result]
    return []


# --- types --------------------------------------------------------------------------------------------------

_PRIMITIVE_NAMES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN_NAMES = {1: "any", 2: "timestamp", 3: "duration"}


def format_type(t: Any | None) -> str:
    """A checked type as cel-go's FormatCELType spells it; None (absent from the type map) is dyn."""
    kind = t.WhichOneof("type_kind") if t is not None else "dyn"
    if kind in (None, "dyn"):
        return "dyn"
    if kind == "primitive":
        return _PRIMITIVE_NAMES[t.primitive]
    if kind == "wrapper":
        return f"wrapper({_PRIMITIVE_NAMES[t.wrapper]})"
    if kind == "well_known":
        return _WELL_KNOWN_NAMES[t.well_known]
    if kind == "null":
        return "null"
    if kind == "error":
        return "!error!"
    if kind == "list_type":
        return f"list({format_type(t.list_type.elem_type)})"
    if kind == "map_type":
        return f"map({format_type(t.map_type.key_type)}, {format_type(t.map_type.value_type)})"
    if kind == "message_type":
        name = t.message_type
        return name.replace("_", ".") if name.startswith(OBJECT_PREFIX) else name
    if kind == "type_param":
        return t.type_param
    if kind == "type":
        return f"type({format_type(t.type)})" if t.type.WhichOneof("type_kind") else "type"
    params = ", ".join(format_type(p) for p in t.abstract_type.parameter_types)
    return f"{t.abstract_type.name}({params})" if params else t.abstract_type.name


def _equivalent(a: Any | None, b: Any | None) -> bool:
    """cel-go's Type.IsEquivalentType: the same kind, name and parameters; type parameters' names aside."""
    ka = a.WhichOneof("type_kind") if a is not None else "dyn"
    kb = b.WhichOneof("type_kind") if b is not None else "dyn"
    if ka != kb:
        return False
    if ka == "list_type":
        return _equivalent(a.list_type.elem_type, b.list_type.elem_type)
    if ka == "map_type":
        return _equivalent(a.map_type.key_type, b.map_type.key_type) and _equivalent(
            a.map_type.value_type, b.map_type.value_type
        )
    if ka == "type":
        return _equivalent(a.type, b.type)
    if ka == "abstract_type":
        pa, pb = a.abstract_type.parameter_types, b.abstract_type.parameter_types
        return (
            a.abstract_type.name == b.abstract_type.name
            and len(pa) == len(pb)
            and all(_equivalent(x, y) for x, y in zip(pa, pb, strict=True))
        )
    if ka in ("type_param", "dyn", "error", "null"):
        return True
    return getattr(a, ka) == getattr(b, ka)


def _optional_value(t: Any | None) -> Any | None:
    """T of optional_type(T) (an optional list element or map entry)."""
    if t is not None and t.WhichOneof("type_kind") == "abstract_type" and t.abstract_type.parameter_types:
        return t.abstract_type.parameter_types[0]
    return t


# --- compiling ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    line: int
    column: int
    """From 1, as the server's messages count."""
    message: str
    ours: bool = False
    """Found by this module's rule (homogeneous literals), not by cel-expr-python's checker."""


@dataclass
class Compiled:
    expression: str
    issues: list[Issue] = field(default_factory=list)
    type: str | None = None
    """The output type (`format_type`), None when it does not compile."""
    program: Any = None

    def display(self) -> str:
        """The errors as cel-go writes them: each with the source line and a caret under the column."""
        lines = self.expression.split("\n")
        out = []
        for i in sorted(self.issues, key=lambda i: (i.line, i.column)):
            source = lines[i.line - 1] if 0 < i.line <= len(lines) else ""
            out.append(f"ERROR: <input>:{i.line}:{i.column}: {i.message}\n | {source}\n | {'.' * (i.column - 1)}^")
        return "\n".join(out)


_ERROR_LINE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")


def compile_expression(expression: str, ctx: Context) -> Compiled:
    """Parse and check the expression, then apply the homogeneous-literal rule to the checked AST."""
    renamed = _rename_objects(expression) if ctx.kind == "mutating" else expression
    objects: tuple = ()  # the apply configuration types, found in the parsed expression
    if renamed != expression:
        try:
            parsed = ParsedExpr.FromString(_unpack(_env(ctx, ()).compile(renamed, disable_check=True)))
        except RuntimeError as e:
            return Compiled(expression, _issues(str(e)))
        objects = _object_types(parsed)
    try:
        program = _env(ctx, objects).compile(renamed)
    except RuntimeError as e:
        return Compiled(expression, _issues(str(e)))
    checked = CheckedExpr.FromString(_unpack(program))
    issues = list(homogeneity_issues(checked, expression))
    return Compiled(expression, issues, None if issues else format_type(checked.type_map.get(checked.expr.id)), program)


def identifiers(expression: str, ctx: Context) -> set[str]:
    """The names an expression reads (comprehension variables included), from its parse alone."""
    parsed = ParsedExpr.FromString(_unpack(_env(ctx, ()).compile(expression, disable_check=True)))
    return {e.ident_expr.name for e in _walk(parsed.expr) if e.WhichOneof("expr_kind") == "ident_expr"}


def _unpack(program: Any) -> bytes:
    """The serialised ParsedExpr or CheckedExpr within the google.protobuf.Any that cel-expr-python writes."""
    return any_pb2.Any.FromString(program.serialize()).value


def _issues(text: str) -> list[Issue]:
    found = [Issue(int(m.group(1)), int(m.group(2)), m.group(3)) for m in _ERROR_LINE.finditer(text)]
    assert found, f"cel-expr-python refused without a located error: {text}"
    return found


def homogeneity_issues(checked: Any, source: str) -> Iterator[Issue]:
    """Every list literal whose elements, and map literal whose keys or values, are not all of the first one's
    type (ValidateHomogeneousAggregateLiterals), located as the server locates them."""
    types = checked.type_map

    def typ(e: Any) -> Any | None:
        return types.get(e.id)

    def issue(e: Any, expected: Any, found: Any) -> Issue:
        line, column = _location(checked.source_info.positions[e.id], source)
        return Issue(
            line, column, f"expected type '{format_type(expected)}' but found '{format_type(found)}'", ours=True
        )

    def visit(e: Any, exempt: bool) -> Iterator[Issue]:
        kind = e.WhichOneof("expr_kind")
        if kind == "list_expr" and not exempt:
            optional = set(e.list_expr.optional_indices)
            first = None
            for i, element in enumerate(e.list_expr.elements):
                t = _optional_value(typ(element)) if i in optional else typ(element)
                if i == 0:
                    first = t
                elif not _equivalent(first, t):
                    yield issue(element, first, t)
                    break
        if kind == "struct_expr" and not e.struct_expr.message_name and not exempt:
            entries = list(e.struct_expr.entries)
            for entry in entries[1:]:
                if not _equivalent(typ(entries[0].map_key), typ(entry.map_key)):
                    yield issue(entry.map_key, typ(entries[0].map_key), typ(entry.map_key))
                first = _optional_value(typ(entries[0].value)) if entries[0].optional_entry else typ(entries[0].value)
                value = _optional_value(typ(entry.value)) if entry.optional_entry else typ(entry.value)
                if not _equivalent(first, value):
                    yield issue(entry.value, first, value)
        # Literals directly within format()'s arguments, and literals within those, are exempt.
        formats = kind == "call_expr" and e.call_expr.function == "format"
        literal = kind == "list_expr" or (kind == "struct_expr" and not e.struct_expr.message_name)
        for child in _children(e):
            yield from visit(child, formats or (exempt and literal))

    yield from visit(checked.expr, False)


def _location(offset: int, source: str) -> tuple[int, int]:
    """(line, column from 1) of a code point offset."""
    before = source[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


# --- policies -----------------------------------------------------------------------------------------------

ANY = ()
"""The types a variable may have: any."""
_VALIDATING = "ValidatingAdmissionPolicy"
_MUTATING = "MutatingAdmissionPolicy"
_MODELLED = frozenset({"failurePolicy", "matchConstraints", "paramKind", "variables", "matchConditions",
                       "validations", "auditAnnotations", "mutations", "reinvocationPolicy"})  # fmt: skip
"""The spec fields of a policy this module knows."""


@dataclass(frozen=True)
class Refusal:
    """One field the server refuses, in its words: `<field>: Invalid value: "<expression>": <detail>`."""

    field: str
    expression: str
    detail: str
    issues: tuple[Issue, ...] = ()

    def __str__(self) -> str:
        return f"{self.field}: Invalid value: {json.dumps(self.expression)}: {self.detail}"


def expressions(obj: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(field, expression, the types it may have, ANY for any) of a policy object, in the order the server
    compiles them: variables first (each may read those before it)."""
    spec = obj["spec"]
    unknown = set(spec) - _MODELLED
    assert obj["kind"] in (_VALIDATING, _MUTATING) and not unknown, f"not modelled: {obj['kind']} {sorted(unknown)}"
    for i, v in enumerate(spec.get("variables") or ()):
        yield f"spec.variables[{i}].expression", v["expression"], ANY
    for i, m in enumerate(spec.get("matchConditions") or ()):
        yield f"spec.matchConditions[{i}].expression", m["expression"], ("bool",)
    for i, v in enumerate(spec.get("validations") or ()):
        yield f"spec.validations[{i}].expression", v["expression"], ("bool",)
        if "messageExpression" in v:
            yield f"spec.validations[{i}].messageExpression", v["messageExpression"], ("string",)
    for i, a in enumerate(spec.get("auditAnnotations") or ()):
        yield f"spec.auditAnnotations[{i}].valueExpression", a["valueExpression"], ("string", "null")
    for i, m in enumerate(spec.get("mutations") or ()):
        if m["patchType"] == "JSONPatch":
            yield f"spec.mutations[{i}].jsonPatch.expression", m["jsonPatch"]["expression"], ("list(JSONPatch)",)
        else:
            assert m["patchType"] == "ApplyConfiguration", m["patchType"]
            yield (
                f"spec.mutations[{i}].applyConfiguration.expression",
                m["applyConfiguration"]["expression"],
                ("Object",),
            )


@dataclass
class PolicyCheck:
    refusals: list[Refusal]
    compiled: dict[str, Compiled]
    """Field -> its compiled expression."""
    context: Context
    """With every variable's type."""


def check_policy(obj: Mapping[str, Any]) -> PolicyCheck:
    """Compile every expression of a ValidatingAdmissionPolicy or MutatingAdmissionPolicy as the server does."""
    kind = "mutating" if obj["kind"] == _MUTATING else "validating"
    params = "paramKind" in obj["spec"]
    names = [v["name"] for v in obj["spec"].get("variables") or ()]
    variables: list[tuple[str, str]] = []
    refusals, compiled = [], {}
    for field_, expression, allowed in expressions(obj):
        c = compiled[field_] = compile_expression(expression, Context(kind, params, tuple(variables)))
        if field_.startswith("spec.variables["):
            variables.append((names[len(variables)], c.type or "dyn"))
        if c.type is None:
            refusals.append(Refusal(field_, expression, "compilation failed: " + c.display(), tuple(c.issues)))
        elif allowed and c.type not in allowed:
            refusals.append(Refusal(field_, expression, _wrong_type(allowed, c.type)))
    return PolicyCheck(refusals, compiled, Context(kind, params, tuple(variables)))


def check_device_selector(expression: str) -> str | None:
    """Why the server refuses a DeviceClass selector (it must be bool), or None."""
    c = compile_expression(expression, Context("device"))
    if c.type is None:
        return "compilation failed: " + c.display()
    return None if c.type == "bool" else _wrong_type(("bool",), c.type)


def _wrong_type(allowed: Sequence[str], found: str) -> str:
    """The server's words (cel-go's Type.String() spells null `null_type`)."""
    spelled = [re.sub(r"\bnull\b", "null_type", t) for t in (*allowed, found)]
    if len(allowed) == 1:
        return f"must evaluate to {spelled[0]} but got {spelled[-1]}"
    return f"must evaluate to one of [{' '.join(spelled[:-1])}] but got {spelled[-1]}"


# --- evaluation ---------------------------------------------------------------------------------------------


def evaluate(compiled: Compiled, data: Mapping[str, Any]) -> Any:
    """The compiled expression's value on `data` (variable name -> value), as JSON-like Python: messages
    (JSONPatch, Object) as dicts of the fields they set, JSON numbers that are whole as ints. A runtime error
    raises RuntimeError."""
    value = compiled.program.eval(data=dict(data))
    if value.type() == cel.Type.ERROR:
        raise RuntimeError(str(value.value()))
    return _plain(value.plain_value())


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if hasattr(value, "DESCRIPTOR"):
        if value.DESCRIPTOR.full_name.startswith("google.protobuf."):
            return _plain(json_format.MessageToDict(value))
        return {f.name: _plain(v) for f, v in value.ListFields()}
    return value
