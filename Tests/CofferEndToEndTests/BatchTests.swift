import CofferTestSupport
import Foundation
import Testing

/// `coffer batch`: commands from standard input, one unlock, nothing on the command line.
@Suite struct BatchTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "batch passphrase", "COFFER_TODAY": "2026-11-24"]

    func batch(_ lines: String, _ arguments: String...) throws -> RunResult {
        try sandbox.run(["batch"] + arguments, environment: environment, input: lines)
    }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try sandbox.run(arguments + ["--json"], environment: environment)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func runsEveryLineWithOneUnlock() throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        let result = try batch(
            """
            # set-up, as a script would
            account add "Joint savings" --category Savings --value 1200
            spend 12.50 Groceries --note 'corner shop, "fresh" bread'
            coffer update 'Joint savings' 1250.75

            budget --json
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"spent\""), "each command's output in order:\n\(result.stdout)")
        let accounts = try #require(try json("account", "list")["accounts"] as? [[String: Any]])
        #expect(accounts.map { $0["name"] as? String } == ["Joint savings"])
        #expect(accounts.first?["value"] as? String == "1250.75")
        let budget = try json("budget")
        #expect(budget["spent"] as? String == "12.50")
        let notes = try sandbox.run(["transaction", "list", "--json"], environment: environment).stdout
        #expect(notes.contains(#"corner shop, \"fresh\" bread"#), "quotes as a shell reads them: \(notes)")
    }

    @Test func stopsAtTheFirstFailureUnlessToldToGoOn() throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        let script = "spend 1 Groceries\nspnd 2 Groceries\nspend 3 Groceries\n"
        let stopped = try batch(script)
        #expect(stopped.status == 64)
        #expect(stopped.stderr.contains("did you mean 'spend'?"))
        #expect(stopped.stderr.contains("stopped at line 2"))
        #expect(try json("budget")["spent"] as? String == "1.00", "line 3 did not run")

        let kept = try batch(script, "--keep-going")
        #expect(kept.status == 64, "the first failure's code")
        #expect(try json("budget")["spent"] as? String == "5.00", "lines 1 and 3 ran again")
    }

    @Test func keyChangesAndNestedShellsAreRefusedInside() throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        for line in ["rekey", "passphrase change", "shell", "batch", "restore x --to y", "sync compact"] {
            let result = try batch(line + "\n")
            #expect(result.status == 64, "\(line): \(result.stderr)")
            #expect(result.stderr.contains("is not available inside a shell or batch"), "\(line)")
        }
        let unclosed = try batch("spend 5 'Groceries\n")
        #expect(unclosed.status == 64)
        #expect(unclosed.stderr.contains("quote is not closed"))
    }

    @Test func withoutAPassphraseSourceItSaysSoAtOnce() throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        let result = try sandbox.run(["batch"], environment: ["COFFER_PASSPHRASE": ""], input: "budget\n")
        #expect(result.status == 64 || result.status == 77, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
