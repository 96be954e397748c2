import CheckoutKit

/// `checkout-driver manual`: the manual page, generated from the command declarations (`Manual`). The packages install
/// it as checkout-driver(1); a binary unpacked anywhere shows it with `checkout-driver manual | man -l -`.
enum ManualCommands {
    static let spec = CommandSpec(
        name: "manual", abstract: "Print the manual page (roff): every command, option and exit code.",
        discussion: """
            The packages install it (man checkout-driver); without them:
              checkout-driver manual | man -l -
            """
    ) { _ throws(Diagnostic) in
        let page = Manual.page(CheckoutDriver.root, globalOptions: GlobalOptions.specs, version: CheckoutDriver.version)
        Console.shared.out(String(page.dropLast()))  // (out ends the line itself)
        return .ok
    }
}
