import CheckoutCLI
import Foundation

// The executable is deliberately thin: everything lives in CheckoutCLI so that tests can drive it in-process too.
exit(await CheckoutDriver.main(arguments: Array(CommandLine.arguments.dropFirst())))
