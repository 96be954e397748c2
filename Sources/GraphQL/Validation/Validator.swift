/// One validation rule of the spec (§5): reads what the context gathered, returns what is wrong.
public protocol ValidationRule: Sendable {
    static func validate(_ context: ValidationContext) -> [GraphQLError]
}

/// Validates an executable document against a schema with the spec's rules, one per file in `Rules/`, in the
/// reference implementation's order. An empty answer means the document may be executed.
public enum Validator {
    public static let specifiedRules: [any ValidationRule.Type] = [
        ExecutableDefinitionsRule.self,
        KnownRootTypeRule.self,
        UniqueOperationNamesRule.self,
        LoneAnonymousOperationRule.self,
        KnownTypeNamesRule.self,
        FragmentsOnCompositeTypesRule.self,
        VariablesAreInputTypesRule.self,
        ScalarLeafsRule.self,
        FieldsOnCorrectTypeRule.self,
        UniqueFragmentNamesRule.self,
        KnownFragmentNamesRule.self,
        NoUnusedFragmentsRule.self,
        PossibleFragmentSpreadsRule.self,
        NoFragmentCyclesRule.self,
        FragmentDepthRule.self,
        UniqueVariableNamesRule.self,
        NoUndefinedVariablesRule.self,
        NoUnusedVariablesRule.self,
        KnownDirectivesRule.self,
        UniqueDirectivesPerLocationRule.self,
        KnownArgumentNamesRule.self,
        UniqueArgumentNamesRule.self,
        ValuesOfCorrectTypeRule.self,
        ProvidedRequiredArgumentsRule.self,
        VariablesInAllowedPositionRule.self,
        UniqueInputFieldNamesRule.self,
    ]

    public static func validate(_ document: Document, against schema: Schema,
                                rules: [any ValidationRule.Type] = specifiedRules) -> [GraphQLError] {
        let context = ValidationContext(schema: schema, document: document)
        return rules.flatMap { $0.validate(context) }
    }
}
