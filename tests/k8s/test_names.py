"""The validators' messages, which end up in user-facing diagnostics."""

from __future__ import annotations

from policyc.k8s import names


def test_messages_explain_the_rule() -> None:
    assert names.is_dns1123_label("a.b") == ["must not contain dots"]
    assert names.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    assert names.is_dns1123_label("Web") == [
        "must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name' or '123-abc')"
    ]
    assert names.is_qualified_name("/x") == ["prefix part must be non-empty"]
    assert names.is_qualified_name("Example.com/x")[0].startswith("prefix part must consist of lower case")
    assert names.is_prefixed_label_key("gpu") == ["must include a prefix (e.g. 'example.com/key')"]
    assert names.is_decimal_integer("007") == ["must be a valid decimal integer in canonical form"]


def test_valid_values_have_no_problems() -> None:
    assert names.is_qualified_name("ai.example.com/gpu.tier") == []
    assert names.is_valid_label_value("") == []
    assert names.is_dns1123_subdomain("system-cluster-critical") == []
    assert names.is_dns1035_label("svc-1") == []
