// JSON, exact decimal money and form and HTML encoding are the wire's, shared with the emulator: every user of the
// Kit sees them as its own.
@_exported import WireTypes
