import Foundation
import TestSupport

/// Runs /usr/bin/curl — an HTTP client independent of the one under test — and returns what it printed.
func curl(_ arguments: [String]) throws -> String {
    try runTool("/usr/bin/curl", arguments).output
}
