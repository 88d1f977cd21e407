"""The policy language: a policy file read (`load`, its YAML errors in plain words in `yaml_errors`), validated
against the strict models of the language (`model`, from which the JSON Schema is generated) with located
diagnostics (`parse`), and its node name ranges (`noderanges`).
"""
