/// One provider as the driver knows it, declared in the provider's own folder (`<Provider>/<Provider>Provider.swift`):
/// its configuration variables, the operations a flow can `use`, its built-in flows, and where its state section keeps
/// the credentials the next invocation sends, and the listeners a run of its flows may need. The configuration, the
/// state store, the built-in flows and the CLI's operation registry are built from `Providers.all`, so adding a
/// provider adds its folders and one line there.
public struct Provider: Sendable {
    /// The name its operations and its state section start with ("bahn").
    public var name: String
    public var variables: [Configuration.Variable]
    public var operations: [FlowOperation]
    public var flows: [BuiltinFlows.Entry]
    /// Paths in the state file (relative to a scope) of the credentials it keeps for the next invocation: left as
    /// they are by the redactor there (the file is mode 0600), masked everywhere else.
    public var keptCredentials: [JSONPath]
    /// Listeners a run starts when its flow uses certain operations (Bahn's webhook inbox).
    public var services: [RunServiceRecipe]
    /// Decodes its state section (`name`, in the chain or a run's scope) as its readers read it: a wrong-typed one
    /// stops every command on the file (`StateStore.checked`). Nil for a provider that keeps none.
    var section: (@Sendable (StateField) throws(Diagnostic) -> Void)?

    init(
        name: String, variables: [Configuration.Variable], operations: [FlowOperation], flows: [BuiltinFlows.Entry],
        keptCredentials: [JSONPath] = [], services: [RunServiceRecipe] = [],
        section: (@Sendable (StateField) throws(Diagnostic) -> Void)? = nil
    ) {
        self.section = section
        self.name = name
        self.variables = variables
        self.operations = operations
        self.flows = flows
        self.keptCredentials = keptCredentials
        self.services = services
    }
}

/// The providers the driver drives: the one list.
public enum Providers {
    public static let all: [Provider] = [.bahn, .centra, .cashApp, .braintree]
}
