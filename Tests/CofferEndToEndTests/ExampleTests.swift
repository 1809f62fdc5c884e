import CofferTestSupport
import Foundation
import Testing

/// `Examples/CofferKitTour` is a second front end: it runs the whole everyday flow (create,
/// accounts, values, budget, invoice, overview, undo, backup, restore) through CofferKit alone.
@Suite struct ExampleTests {
    let tour = cofferBinary.deletingLastPathComponent().appendingPathComponent("CofferKitTour")

    @Test func theTourRunsTheEverydayFlowThroughCofferKitAlone() throws {
        let sandbox = Sandbox()
        let folder = sandbox.directory.path("tour")
        let process = Process()
        process.executableURL = tour
        process.arguments = [folder.path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stdout)\n\(stderr)")
        #expect(stdout.contains("Net worth £450.50 (receivable £200.00)"))
        #expect(stdout.contains("Undone: Spent £999.00 on Dining Out"))
        #expect(stdout.contains("net worth £450.50, as before"))
        #expect(stdout.hasSuffix("Tour complete.\n"))
        // The restored vault opens with the CLI too: the two front ends share one format.
        let overview = try sandbox.run(
            ["overview", "--json", "--vault", folder.appendingPathComponent("restored.coffer").path],
            environment: ["COFFER_PASSPHRASE": "a tour of the application layer", "COFFER_TODAY": "2026-11-22"])
        #expect(
            overview.status == 0 && overview.stdout.contains("\"netWorth\" : \"450.50\""),
            "\(overview.stdout)\(overview.stderr)")
    }

    /// The example links the application layer and nothing of the CLI: no CofferCLI and no
    /// ArgumentParser symbol is in its binary (both are in `coffer`'s, which shows the check sees them).
    @Test func theTourLinksNeitherTheCLINorTheArgumentParser() throws {
        let tourBinary = try Data(contentsOf: tour)
        let cli = try Data(contentsOf: cofferBinary)
        for module in ["9CofferCLI", "14ArgumentParser"] {
            #expect(cli.range(of: Data(module.utf8)) != nil, "\(module) is found in coffer")
            #expect(tourBinary.range(of: Data(module.utf8)) == nil, "\(module) must not be linked into the tour")
        }
    }
}
