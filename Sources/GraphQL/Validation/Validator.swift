/// One validation rule of the spec (§5): reads what the context gathered, returns what is wrong.
public protocol ValidationRule: Sendable {
    static func validate(_ context: ValidationContext) -> [GraphQLError]
    /// The rule follows fragment spreads by recursion, so it runs only once fragments are known to nest within
    /// `Parser.maxDepth` (FragmentDepthRule): a hostile chain of fragments cannot exhaust the stack.
    static var followsSpreadsRecursively: Bool { get }
}

extension ValidationRule {
    public static var followsSpreadsRecursively: Bool { false }
}

/// Validates an executable document against a schema with the spec's rules, one per file in `Rules/`, in the
/// reference implementation's order. An empty answer means the document may be executed.
public enum Validator {
    public static let specifiedRules: [any ValidationRule.Type] = [
        ExecutableDefinitionsRule.self,
        KnownRootTypeRule.self,
        UniqueOperationNamesRule.self,
        LoneAnonymousOperationRule.self,
        SingleFieldSubscriptionsRule.self,
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
        OverlappingFieldsCanBeMergedRule.self,
        UniqueInputFieldNamesRule.self,
        MaxIntrospectionDepthRule.self,
    ]

    public static func validate(
        _ document: Document, against schema: Schema,
        rules: [any ValidationRule.Type] = specifiedRules
    ) -> [GraphQLError] {
        let context = ValidationContext(schema: schema, document: document)
        // Any fragment past the limit — an unused one too — keeps the recursive rules away from the document.
        let fragmentsTooDeep = FragmentDepthRule.anyTooDeep(context)
        return rules.flatMap { rule in fragmentsTooDeep && rule.followsSpreadsRecursively ? [] : rule.validate(context)
        }
    }
}
