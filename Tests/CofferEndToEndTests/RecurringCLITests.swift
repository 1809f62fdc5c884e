import CofferTestSupport
import Foundation
import Testing

/// Recurring items through the real binary: rent and salary appear in `coffer upcoming` and are
/// confirmed in one command, each occurrence its own undoable change; missed ones are listed,
/// never invented; a retainer becomes a draft invoice.
@Suite struct RecurringCLITests {
    let sandbox = Sandbox()

    func run(_ arguments: [String], today: String = "2026-11-24", input: String? = nil) throws -> RunResult {
        try sandbox.run(
            arguments, environment: ["COFFER_PASSPHRASE": "recurring passphrase", "COFFER_TODAY": today], input: input)
    }

    @discardableResult
    func ok(_ arguments: String..., today: String = "2026-11-24") throws -> RunResult {
        let result = try run(arguments, today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    func json(_ arguments: String..., today: String = "2026-11-24") throws -> [String: Any] {
        let result = try run(arguments + ["--json"], today: today)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func names(_ list: Any?) -> [String] {
        (list as? [[String: Any]] ?? []).map { "\($0["name"] as? String ?? "") \($0["date"] as? String ?? "")" }
    }

    @Test func rentAndSalaryAreConfirmedInOneCommandAndEachIsUndoable() throws {
        #expect(try run(["init", "--kdf", "interactive"]).status == 0)
        let setUp = try run(
            ["batch"],
            input: """
                account add Current --category Cash --value 1000 --date 2026-11-01
                income add Salary 2500 --frequency monthly --account Current
                client add Acme
                recurring add Rent 1200 --category Rent --every monthly --day 1 --start 2026-11-01 --from Current
                recurring add Salary 2500 --source Salary --every monthly --day last --start 2026-11-01
                recurring add Retainer 500 --client Acme --every monthly --day 28 --tax 20% --start 2026-11-01
                recurring add Gym 30 --category Hobbies --every weekly --start 2026-11-25

                """)
        #expect(setUp.status == 0, "\(setUp.stdout)\(setUp.stderr)")

        // On the 24th: November's rent was missed (listed, nothing recorded); the rest is coming.
        let upcoming = try json("upcoming")
        #expect(names(upcoming["missed"]) == ["Rent 2026-11-01"])
        #expect(names(upcoming["due"]).isEmpty)
        #expect(
            names(upcoming["upcoming"]) == [
                "Gym 2026-11-25", "Retainer 2026-11-28", "Salary 2026-11-30", "Rent 2026-12-01", "Gym 2026-12-02",
            ], "the next 14 days: \(upcoming)")
        #expect(try json("budget", "--month", "2026-11")["spent"] as? String == "0.00", "nothing is invented")
        let text = try ok("upcoming").stdout
        #expect(text.contains("Missed") && text.contains("2026-11-01  Rent"), "\(text)")

        // Month end: one command records everything due by then, missed rent included.
        let confirmed = try json("upcoming", "confirm", "--all", today: "2026-11-30")
        let recorded = try #require(confirmed["recorded"] as? [[String: Any]])
        #expect(
            names(recorded) == ["Gym 2026-11-25", "Rent 2026-11-01", "Retainer 2026-11-28", "Salary 2026-11-30"],
            "\(recorded)")
        #expect(recorded.first { $0["name"] as? String == "Retainer" }?["invoice"] as? String == "INV-0001")
        let november = try json("budget", "--month", "2026-11", today: "2026-11-30")
        #expect(november["income"] as? String == "2500.00" && november["spent"] as? String == "1230.00", "\(november)")
        let current = try json("account", "show", "Current", today: "2026-11-30")
        #expect(current["value"] as? String == "2300.00", "rent left Current and salary arrived: \(current)")
        let invoices = try ok("invoices", today: "2026-11-30").stdout
        #expect(invoices.contains("○ draft") && invoices.contains("£600.00"), "a retainer becomes a draft: \(invoices)")

        // Each occurrence is its own change: one undo takes back only the last one.
        let undone = try ok("undo").stdout
        #expect(undone.contains("Salary"), "\(undone)")
        let after = try json("upcoming", today: "2026-11-30")
        #expect(names(after["due"]) == ["Salary 2026-11-30"], "the undone occurrence is due again: \(after)")
        #expect(try json("budget", "--month", "2026-11", today: "2026-11-30")["income"] as? String == "0.00")

        // Confirming again records nothing twice.
        try ok("upcoming", "confirm", "Salary", today: "2026-11-30")
        let twice = try json("upcoming", "confirm", "--all", today: "2026-11-30")
        #expect((twice["recorded"] as? [Any])?.isEmpty == true)
    }

    @Test func skippingAndRefusals() throws {
        #expect(try run(["init", "--kdf", "interactive"]).status == 0)
        try ok(
            "recurring", "add", "Netflix", "10.99", "--category", "Subscriptions", "--every", "monthly", "--day", "31",
            "--start", "2026-09-01")
        #expect(names(try json("upcoming")["missed"]) == ["Netflix 2026-09-30", "Netflix 2026-10-31"])
        try ok("upcoming", "skip", "Netflix")
        #expect(names(try json("upcoming")["missed"]) == ["Netflix 2026-10-31"])
        let listed = try json("recurring", "list")
        let row = try #require((listed["recurring"] as? [[String: Any]])?.first)
        #expect(
            row["day"] as? String == "31" && row["next"] as? String == "2026-10-31"
                && row["every"] as? String == "monthly")
        try ok("undo")
        #expect(names(try json("upcoming")["missed"]).count == 2, "a skip is undone like any change")

        for (arguments, message) in [
            (["recurring", "add", "X", "5", "--every", "monthly"], "exactly one of"),
            (["recurring", "add", "X", "5", "--category", "Rent", "--every", "daily"], "--every"),
            (["recurring", "add", "X", "5", "--category", "Rent", "--every", "monthly", "--day", "32"], "--day"),
            (["recurring", "add", "X", "5", "--category", "Rent", "--every", "weekly", "--day", "3"], "--day"),
            (["recurring", "add", "X", "5", "--category", "Rent", "--every", "monthly", "--into", "Y"], "--into"),
            (["recurring", "add", "Netflix", "5", "--category", "Rent", "--every", "monthly"], "already exists"),
            (["upcoming", "confirm"], "--all"),
        ] {
            let refused = try run(arguments)
            #expect(refused.status == 64 && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        #expect((try json("recurring", "list")["recurring"] as? [Any])?.count == 1, "nothing was added")

        // The JSON export carries recurring items, with how far each got.
        try ok("upcoming", "skip", "Netflix")
        let export = sandbox.directory.path("export.json")
        try ok("export", "json", "--out", export.path)
        let copy = sandbox.directory.path("copy.coffer").path
        #expect(try run(["init", "--kdf", "interactive", "--vault", copy]).status == 0)
        #expect(try run(["import", "json", export.path, "--vault", copy]).status == 0)
        let there = try run(["upcoming", "--json", "--vault", copy])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(there.stdout.utf8)) as? [String: Any])
        #expect(names(object["missed"]) == ["Netflix 2026-10-31"], "\(there.stdout)")
    }

    /// A confirm that one occurrence would refuse (its account closed) records none of them;
    /// deleting an account clears it from recurring items; `recurring edit` changes what comes next.
    @Test func aRefusedConfirmRecordsNothingAndEditsTakeEffect() throws {
        #expect(try run(["init", "--kdf", "interactive"]).status == 0)
        let setUp = try run(
            ["batch"],
            input: """
                account add Bank --category Cash --value 1000 --date 2026-01-01
                account add Spare --category Cash --value 10 --date 2026-01-01
                recurring add Gym 30 --category Hobbies --every monthly --day 5 --start 2026-10-01
                recurring add Rent 500 --category Rent --every monthly --day 1 --start 2026-10-01 --from Bank
                account close Bank --date 2026-10-20

                """)
        #expect(setUp.status == 0, "\(setUp.stdout)\(setUp.stderr)")
        let refused = try run(["upcoming", "confirm", "--all"])
        #expect(refused.status == 64 && refused.stderr.contains("Bank was closed"), "\(refused.stderr)")
        #expect(try json("budget", "--month", "2026-10")["spent"] as? String == "0.00", "nothing was recorded")
        #expect(names(try json("upcoming")["missed"]).count == 4)

        try ok("recurring", "edit", "Rent", "--from", "Spare", "--amount", "450")
        try ok("upcoming", "confirm", "Rent")
        #expect(try json("account", "show", "Spare")["value"] as? String == "-890.00", "10 - 2 × 450")
        let wrong = try run(["recurring", "edit", "Gym", "--into", "Spare"])
        #expect(wrong.status == 64 && wrong.stderr.contains("Spending leaves"), "\(wrong.stderr)")

        try ok("recurring", "edit", "Gym", "--from", "Spare")
        try ok("account", "delete", "Spare", "--yes")
        let gym = try json("upcoming", "confirm", "Gym")
        #expect((gym["recorded"] as? [Any])?.count == 2, "the deleted account no longer blocks it: \(gym)")
    }
}
