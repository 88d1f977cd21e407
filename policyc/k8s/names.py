"""Syntax validators for Kubernetes names, label keys and label values.

They mirror apimachinery's `util/validation` and `api/validate/content` checks: each returns a list of
problems written for an end user, and an empty list when the value is valid. Lengths are counted in
characters; Kubernetes counts bytes, which differs only for non-ASCII text that is invalid anyway.
"""

from __future__ import annotations

import functools
import re

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
LABEL_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63

_DNS1123_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z](?:[-a-z0-9]*[a-z0-9])?")
_LABEL_NAME = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?")
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
_DECIMAL_INTEGER = re.compile(r"0|-?[1-9][0-9]*")

_DNS1123_LABEL_MSG = (
    "must consist of lower case alphanumeric characters or '-', and must start and end with "
    "an alphanumeric character (e.g. 'my-name' or '123-abc')"
)
_DNS1123_SUBDOMAIN_MSG = (
    "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'example.com')"
)
_DNS1035_LABEL_MSG = (
    "must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name' or 'abc-123')"
)
_LABEL_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
)
_LABEL_VALUE_MSG = (
    "must be empty or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')"
)
# Kubernetes' own wording: the toleration and taint comparison errors quote it verbatim.
DECIMAL_INTEGER_MSG = "must be a valid decimal integer in canonical form"
EMPTY_MSG = "must be non-empty"


def _too_long(limit: int) -> str:
    return f"must be no more than {limit} characters"


def is_dns1123_label(value: str) -> list[str]:
    """RFC 1123 label (namespace names): lower case alphanumerics and '-', at most 63 characters."""
    errors = [_too_long(DNS1123_LABEL_MAX_LENGTH)] if len(value) > DNS1123_LABEL_MAX_LENGTH else []
    if not _DNS1123_LABEL.fullmatch(value):
        errors.append("must not contain dots" if _DNS1123_SUBDOMAIN.fullmatch(value) else _DNS1123_LABEL_MSG)
    return errors


def is_dns1123_subdomain(value: str) -> list[str]:
    """RFC 1123 subdomain (most object names): dot-separated labels, at most 253 characters."""
    errors = [_too_long(DNS1123_SUBDOMAIN_MAX_LENGTH)] if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH else []
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_DNS1123_SUBDOMAIN_MSG)
    return errors


def is_dns1035_label(value: str) -> list[str]:
    """RFC 1035 label (Service names): like a DNS-1123 label but starting with a letter."""
    errors = [_too_long(DNS1035_LABEL_MAX_LENGTH)] if len(value) > DNS1035_LABEL_MAX_LENGTH else []
    if not _DNS1035_LABEL.fullmatch(value):
        errors.append(_DNS1035_LABEL_MSG)
    return errors


def is_qualified_name(value: str) -> list[str]:
    """A label key (also taint keys and selector keys): an optional DNS subdomain prefix and '/', then a name
    of at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an alphanumeric."""
    return list(_qualified_name(value))


@functools.lru_cache(maxsize=4096)  # the same few keys label thousands of objects
def _qualified_name(value: str) -> tuple[str, ...]:
    parts = value.split("/")
    if len(parts) > 2:
        return (
            "must be a name of alphanumeric characters, '-', '_' or '.' that starts and ends with an "
            "alphanumeric character, with an optional DNS subdomain prefix and a single '/' "
            "(e.g. 'example.com/MyName')",
        )
    errors: list[str] = []
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append(f"prefix part {EMPTY_MSG}")
        else:
            errors.extend(f"prefix part {msg}" for msg in is_dns1123_subdomain(prefix))
    else:
        name = value
    if not name:
        errors.append(f"name part {EMPTY_MSG}")
    elif len(name) > LABEL_NAME_MAX_LENGTH:
        errors.append(f"name part {_too_long(LABEL_NAME_MAX_LENGTH)}")
    if not _LABEL_NAME.fullmatch(name):
        errors.append(f"name part {_LABEL_NAME_MSG}")
    return tuple(errors)


def is_valid_label_value(value: str) -> list[str]:
    """A label value (also taint values and In/NotIn values): empty, or at most 63 characters of
    alphanumerics, '-', '_' or '.' that start and end with an alphanumeric."""
    errors = [_too_long(LABEL_VALUE_MAX_LENGTH)] if len(value) > LABEL_VALUE_MAX_LENGTH else []
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(_LABEL_VALUE_MSG)
    return errors


def is_prefixed_label_key(value: str) -> list[str]:
    """A qualified name that must carry a 'domain/' prefix."""
    errors = is_qualified_name(value)
    if not errors and "/" not in value:
        errors.append("must include a prefix (e.g. 'example.com/key')")
    return errors


def is_decimal_integer(value: str) -> list[str]:
    """A decimal integer in canonical form: '0', or an optional '-' and digits without a leading zero.

    No '+', spaces, leading zeros or other bases; the size is not limited."""
    if not value:
        return [EMPTY_MSG]
    return [] if _DECIMAL_INTEGER.fullmatch(value) else [DECIMAL_INTEGER_MSG]
