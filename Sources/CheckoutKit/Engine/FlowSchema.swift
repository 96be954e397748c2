import Foundation

/// The flow format as a JSON Schema (draft 2020-12), for editors: `flow schema` prints it, and a flow file's
/// `"$schema"` (or VS Code's `json.schemas`) points at the saved copy. It is built from the decoder's own declarations
/// — the keys each object may have (`FlowDecoder.Keys`), every registered operation's parameters for its `with` — so it
/// validates and completes what `flow run` accepts. The decoder stays the judge (templates, references, cycles, files):
/// the schema is what an editor can check as a person types. Scripts/check-flow-schema has an independent validator
/// (PyPI `jsonschema`) check the schema itself, every built-in flow against it, and known-bad files against it.
public enum FlowSchema {
    public static func document(registry: OperationRegistry) -> JSON {
        let operations = registry.all
        var defs: JSON.Object = [
            // A step runs a request or an operation, or includes another flow's steps.
            "step": [
                "if": ["type": "object", "required": ["include"]], "then": ["$ref": "#/$defs/includeStep"],
                "else": ["$ref": "#/$defs/actionStep"],
            ],
            "actionStep": step(operations),
            "includeStep": includeStep,
            "request": request,
            "expect": expect,
            "until": until,
            "retry": retry,
            "duration": duration,
            "decimal": [
                "anyOf": [["type": "number"], ["type": "string", "pattern": "^-?[0-9]{1,30}(\\.[0-9]{1,30})?$"]],
                "description": "a number, or a decimal string such as \"10.00\" (compared exactly)",
            ],
            "comparison": bounds(of: "#/$defs/decimal"),
            "jsonPath": [
                "type": "string", "minLength": 1,
                "description": "a JSON path into the step's output: a.b[0][\"odd key\"]",
            ],
            "template": template,
        ]
        for op in operations { defs["with." + op.name] = with(op) }
        let properties: JSON.Object = [
            "$schema": ["type": "string", "description": "where this schema is (for editors)"],
            "name": ["type": "string", "minLength": 1, "description": "the flow's name in reports"],
            "description": ["type": "string"],
            "vars": [
                "type": "object",
                "description": "variables and their defaults; --var NAME=VALUE overrides them; ${vars.NAME} reads them",
            ],
            "varDescriptions": [
                "type": "object", "additionalProperties": ["type": "string", "minLength": 1],
                "description": "what each variable of vars means (flow describe shows it)",
            ],
            "steps": ["type": "array", "minItems": 1, "items": ["$ref": "#/$defs/step"]],
            "finally": [
                "type": "array", "items": ["$ref": "#/$defs/step"],
                "description": "steps that run after the main steps whether they passed or failed",
            ],
            "deadline": ["$ref": "#/$defs/duration", "description": "how long the whole flow may take"],
        ]
        return [
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "checkout-driver flow file",
            "description": "A flow: steps run in order by checkout-driver (docs/flow-files.md).",
            "type": "object",
            "required": ["name", "steps"],
            "additionalProperties": false,
            "properties": .object(properties),
            "$defs": .object(defs),
        ]
    }

    /// A string holding a `${…}` reference stands for any kind of value: it is only known when the step runs.
    static let template: JSON = [
        "type": "string", "pattern": "\\$\\{", "description": "a ${…} template, resolved when the step runs",
    ]

    static let duration: JSON = [
        "anyOf": [
            ["type": "number", "minimum": 0],
            ["type": "string", "pattern": "^\\s*([0-9]+(\\.[0-9]+)?|([0-9]+(\\.[0-9]+)?(h|ms|m|s))+)\\s*$"],
        ],
        "description": "seconds (1.5), or \"500ms\", \"2s\", \"1m\", \"1m30s\", \"5h\"",
    ]

    static func step(_ operations: [FlowOperation]) -> JSON {
        let properties: JSON.Object = [
            "name": [
                "type": "string", "pattern": "^[A-Za-z0-9_-]+$",
                "description": "unique in the flow; ${steps.NAME.path} reads its output",
            ],
            "description": ["type": "string"],
            "request": ["$ref": "#/$defs/request"],
            "use": [
                "enum": .array(operations.map { .string($0.name) }),
                "description": "a provider operation (flow ops lists them)",
            ],
            "with": ["type": "object", "description": "the operation's arguments"],
            "capture": [
                "type": "object", "additionalProperties": ["$ref": "#/$defs/jsonPath"],
                "description": "variable name → path into the step's output; captured values become ${vars.NAME}",
            ],
            "expect": ["$ref": "#/$defs/expect"],
            "retry": ["$ref": "#/$defs/retry"],
            "until": ["$ref": "#/$defs/until"],
            "optional": ["type": "boolean", "description": "a failure is reported but does not fail the flow"],
        ]
        // Each operation's `with`: its own arguments, the required ones required.
        let withs: [JSON] = operations.map { op in
            [
                "if": ["required": ["use"], "properties": ["use": ["const": .string(op.name)]]],
                "then": ["properties": ["with": ["$ref": .string("#/$defs/with." + op.name)]]],
            ]
        }
        let opsWithRequiredArguments = operations.filter { $0.parameters.contains(where: \.required) }.map {
            JSON.string($0.name)
        }
        return [
            "type": "object",
            "required": ["name"],
            "additionalProperties": false,
            "properties": .object(properties),
            // Either a raw request or an operation; `with` belongs to an operation.
            "oneOf": [
                ["required": ["request"], "not": ["anyOf": [["required": ["use"]], ["required": ["with"]]]]],
                ["required": ["use"], "not": ["required": ["request"]]],
            ],
            "allOf": .array(
                withs + [
                    // An operation with a required argument needs its `with`.
                    [
                        "if": ["required": ["use"], "properties": ["use": ["enum": .array(opsWithRequiredArguments)]]],
                        "then": ["required": ["with"]],
                    ]
                ]),
        ]
    }

    static let includeStep: JSON = [
        "type": "object",
        "required": ["include"],
        "additionalProperties": false,
        "properties": [
            "include": [
                "type": "string", "minLength": 1,
                "description":
                    "a built-in flow (flow list), or a flow file: a path with '/' or ending in .json, relative to this file",
            ],
            "vars": [
                "type": "object", "description": "values for the included flow's variables (shared with this flow's)",
            ],
            "description": ["type": "string"],
        ],
    ]

    static func with(_ op: FlowOperation) -> JSON {
        var properties: JSON.Object = [:]
        for p in op.parameters {
            var kind: JSON
            switch p.kind {
            case .string:
                kind = p.choices.map { ["type": "string", "enum": .array($0.map(JSON.string))] } ?? ["type": "string"]
            case .integer:
                kind = ["type": "integer"]
                if let range = p.range {
                    kind = ["type": "integer", "minimum": JSON(range.lowerBound), "maximum": JSON(range.upperBound)]
                }
            case .number: kind = ["type": "number"]
            case .boolean: kind = ["type": "boolean"]
            case .object: kind = ["type": "object"]
            case .array: kind = ["type": "array"]
            // Digits with an optional fraction, as a number or a string; the currency's digits are checked by `flow
            // validate`.
            case .amount:
                kind = [
                    "anyOf": [
                        p.amount?.allowsZero == true
                            ? ["type": "number", "minimum": 0] : ["type": "number", "exclusiveMinimum": 0],
                        ["type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?$"],
                    ]
                ]
            // Seconds, or a duration such as "90s"; which strings read as one is flow validate's.
            case .duration:
                kind = ["anyOf": [["type": "number", "exclusiveMinimum": 0], ["type": "string", "minLength": 1]]]
            case .any: kind = [:]
            }
            var property: JSON =
                (p.kind == .string && p.choices == nil) || p.kind == .any
                ? kind : ["anyOf": [kind, ["$ref": "#/$defs/template"]]]
            let meaning = [p.help, p.defaultValue.map { "[default: \($0)]" } ?? ""].filter { !$0.isEmpty }.joined(
                separator: " ")
            if case .object(var o) = property, !meaning.isEmpty {
                o["description"] = .string(meaning)
                property = .object(o)
            }
            properties[p.name] = property
        }
        var schema: JSON.Object = [
            "type": "object",
            "description": .string(op.summary),
            "additionalProperties": false,
            "properties": .object(properties),
            "required": .array(op.parameters.filter(\.required).map { .string($0.name) }),
        ]
        // Exactly one of each set of alternatives.
        if !op.alternatives.isEmpty {
            schema["allOf"] = .array(
                op.alternatives.map { names in ["oneOf": .array(names.map { ["required": [.string($0)]] })] })
        }
        return .object(schema)
    }

    static let request: JSON = [
        "type": "object",
        "required": ["url"],
        "additionalProperties": false,
        "properties": [
            "method": ["type": "string", "pattern": "^[A-Za-z]+$", "description": "GET when left out"],
            "url": ["type": "string", "minLength": 1],
            "headers": [
                "type": "object", "propertyNames": ["pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"],
                "additionalProperties": ["type": "string", "minLength": 1],
            ],
            "json": ["description": "a JSON body; templates in any string"],
            "body": ["type": "string", "minLength": 1, "description": "a text body"],
            "bodyFile": ["type": "string", "minLength": 1, "description": "a file sent byte for byte"],
        ],
        "not": [
            "anyOf": [
                ["required": ["json", "body"]], ["required": ["json", "bodyFile"]], ["required": ["body", "bodyFile"]],
            ]
        ],
    ]

    static let status: JSON = ["type": "integer", "minimum": 100, "maximum": 599]

    static let expect: JSON = [
        "type": "object",
        "additionalProperties": false,
        "properties": [
            "status": [
                "anyOf": [status, ["type": "array", "minItems": 1, "items": status]], "description": "default: any 2xx",
            ],
            "equals": ["type": "object", "description": "path → the value it must equal"],
            "matches": [
                "type": "object", "additionalProperties": ["type": "string"],
                "description": "path → a regular expression",
            ],
            "exists": ["type": "array", "items": ["$ref": "#/$defs/jsonPath"]],
            "compare": [
                "type": "object", "additionalProperties": ["$ref": "#/$defs/comparison"],
                "description":
                    "path → bounds on a number or a decimal string, compared exactly: {\">\": 0, \"<=\": \"99.99\"}, {\"between\": [1, 5]}",
            ],
            "contains": [
                "type": "object",
                "description": "path → a substring of a string, an element of an array, or a key of an object",
            ],
            "count": [
                "type": "object",
                "additionalProperties": [
                    "anyOf": [["type": "integer", "minimum": 0], ["$ref": "#/$defs/comparison"]]
                ],
                "description": "path → the number of an array's elements, or bounds on it",
            ],
            "type": [
                "type": "object",
                "additionalProperties": ["enum": .array(Condition.ValueType.allCases.map { .string($0.rawValue) })],
                "description": "path → the type of the value there",
            ],
            "headers": [
                "type": "object", "propertyNames": ["pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"],
                "additionalProperties": [
                    "anyOf": [
                        ["type": "string"],
                        [
                            "type": "object", "additionalProperties": false, "minProperties": 1, "maxProperties": 1,
                            "properties": [
                                "equals": ["type": "string"], "matches": ["type": "string"],
                                "exists": ["type": "boolean"],
                            ],
                        ],
                    ]
                ],
                "description": "a header of the step's last answer → the value it equals, or {matches}, or {exists}",
            ],
            "duration": .object(
                bounds(of: "#/$defs/duration").objectValue!.merging([
                    "description": "bounds on how long the step takes: {\"<\": \"500ms\"}"
                ]) { _, new in new }),
        ],
    ]

    /// `{"<": x, …, "between": [low, high]}` over values of one kind.
    static func bounds(of kind: String) -> JSON {
        var properties: JSON.Object = [:]
        for op in Comparison.Operator.allCases { properties[op.rawValue] = ["$ref": .string(kind)] }
        properties["between"] = ["type": "array", "minItems": 2, "maxItems": 2, "items": ["$ref": .string(kind)]]
        return ["type": "object", "minProperties": 1, "additionalProperties": false, "properties": .object(properties)]
    }

    static let until: JSON = [
        "type": "object",
        "required": ["path"],
        "additionalProperties": false,
        "properties": [
            "path": ["$ref": "#/$defs/jsonPath"],
            "equals": [:],
            "matches": ["type": "string"],
            "exists": ["type": "boolean"],
            "in": ["type": "array"],
            "interval": ["$ref": "#/$defs/duration"],
            "timeout": ["$ref": "#/$defs/duration"],
        ],
        // Exactly one test.
        "oneOf": [["required": ["equals"]], ["required": ["matches"]], ["required": ["exists"]], ["required": ["in"]]],
    ]

    static let retry: JSON = [
        "type": "object",
        "additionalProperties": false,
        "properties": [
            "attempts": ["type": "integer", "minimum": 1, "maximum": 100],
            "interval": ["$ref": "#/$defs/duration"],
            "backoff": ["type": "number", "minimum": 1, "maximum": 10],
        ],
    ]
}
