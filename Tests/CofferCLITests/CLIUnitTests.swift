import Foundation
import Testing
import VaultCrypto
import VaultStore
import CofferKit
import FinanceCore
@testable import CofferCLI

@Suite struct DurationTests {
    @Test(arguments: [("90s", 90.0), ("15m", 900.0), ("2h", 7200.0), ("1h30m", 5400.0), ("1H", 3600.0), ("24h", 86400.0), ("1s", 1.0)])
    func parsesDurations(text: String, seconds: Double) throws {
        #expect(try Duration.parse(text) == seconds)
    }

    @Test(arguments: ["", "15", "m", "15x", "1.5h", "-5m", "25h", "0s", "forever", "9999999h"])
    func rejectsOthersWithExitCode64(text: String) {
        do {
            _ = try Duration.parse(text)
            Issue.record("accepted '\(text)'")
        } catch let error as CLIError {
            #expect(error.status == .invalidInput)
            #expect(error.message.contains("'\(text)'"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func formatsDurations() {
        #expect(Duration.format(900) == "15m")
        #expect(Duration.format(5400) == "1h30m")
        #expect(Duration.format(45) == "45s")
    }
}

@Suite struct PassphraseSourceTests {
    @Test func usesOnlyTheFirstLine() {
        #expect(PassphraseSource.firstLine(Array("secret\n".utf8)) == Array("secret".utf8))
        #expect(PassphraseSource.firstLine(Array("secret\r\nignored".utf8)) == Array("secret".utf8))
        #expect(PassphraseSource.firstLine(Array("  spaced  ".utf8)) == Array("  spaced  ".utf8), "spaces are part of a passphrase")
    }

    @Test func environmentVariableIsASource() throws {
        let passphrase = try PassphraseSource.passphrase(file: nil, command: nil, environmentVariable: "COFFER_PASSPHRASE",
                                                         environment: ["COFFER_PASSPHRASE": "from env"], prompt: "", confirm: false)
        #expect(passphrase.byteCount == 8)
    }

    @Test func missingFileIsInvalidInput() {
        #expect(throws: CLIError.self) {
            try PassphraseSource.passphrase(file: "/nonexistent/passphrase", command: nil, environmentVariable: "X",
                                            environment: [:], prompt: "", confirm: false)
        }
    }
}

@Suite struct ExitCodeMappingTests {
    @Test(arguments: [
        (VaultError.Code.notFound, CofferCLI.ExitStatus.notFound),
        (.alreadyExists, .invalidInput),
        (.notAVault, .damaged), (.headerDamaged, .damaged), (.headerTampered, .damaged),
        (.integrityFailure, .damaged), (.unsafeParameters, .damaged), (.unsupportedVersion, .damaged),
        (.wrongPassphrase, .noPermission), (.wrongRecoveryKey, .noPermission), (.noRecoveryKey, .noPermission),
        (.sessionNotFound, .noPermission), (.sessionExpired, .noPermission), (.sessionInvalid, .noPermission),
        (.storageFailure, .failure), (.insecureDirectory, .failure),
    ])
    func vaultErrorsMapToDocumentedCodes(code: VaultError.Code, status: CofferCLI.ExitStatus) {
        #expect(CLIError(VaultError(code, "message")).status == status)
    }

    @Test func codesAreTheSysexitsValues() {
        #expect([CofferCLI.ExitStatus.ok, .failure, .invalidInput, .damaged, .notFound, .noPermission].map(\.rawValue) == [0, 1, 64, 65, 66, 77])
    }

    @Test func integrityProblemsBecomeDetailLines() throws {
        let id = RecordID.random()
        let error = CLIError(VaultError(.integrityFailure, "damaged", problems: [
            IntegrityProblem(kind: .recordMissing, recordID: id, detail: "is missing"),
        ]))
        #expect(error.details == ["record \(id.hex): is missing"])
    }
}

@Suite struct GlobalOptionPlacementTests {
    @Test(arguments: [
        (["--vault", "v", "init", "--kdf", "interactive"], ["init", "--vault", "v", "--kdf", "interactive"]),
        (["--vault=v", "passphrase", "change"], ["passphrase", "change", "--vault=v"]),
        (["--passphrase-file", "p", "--vault", "v", "recovery-key", "create"], ["recovery-key", "create", "--passphrase-file", "p", "--vault", "v"]),
        (["status", "--vault", "v"], ["status", "--vault", "v"]),
        (["--vault"], ["--vault"]),
        (["--help"], ["--help"]),
    ])
    func movesLeadingGlobalOptionsAfterTheSubcommand(input: [String], expected: [String]) {
        #expect(GlobalOptionPlacement.normalise(input) == expected)
    }
}

@Suite struct ExportIDTests {
    @Test func exportedIDsParseLikeFoundation() {
        for _ in 0..<200 {
            let id = UUID()
            #expect(UUID(exportedID: id.uuidString) == id)
            #expect(UUID(exportedID: id.uuidString.lowercased()) == id)
            #expect(RecordID(uuid: id).uuid == id, "record ids and UUIDs share their 16 bytes")
        }
        for text in ["", "not-an-id", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000",
                     "123e4567+e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400g"] {
            #expect(UUID(exportedID: text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil)
        }
    }
}

/// After each small write the ledger patches its views in place; they must equal what decoding
/// the whole vault again gives.
@Suite struct IncrementalLedgerTests {
    func snapshot(_ ledger: Ledger) -> String {
        var text = ""
        dump((ledger.settings, ledger.settingsID, ledger.accounts, ledger.updates, ledger.categoryRates.sorted { $0.key.uuidString < $1.key.uuidString }.map(\.value),
              ledger.changes.map(\.entry), ledger.budgetCategories, ledger.incomeSources, ledger.transactions, ledger.goals, ledger.clients,
              ledger.invoices, ledger.invoiceCounter?.counter, ledger.ruleSets), to: &text)
        return text
    }

    @Test func smallWritesMatchAFullReload() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            try ledger.ensureDefaultCategories()
            let account = Account(name: "Savings", category: "Savings", kind: .asset, created: try CalendarDate(parsing: "2025-01-01"))
            try ledger.commit("add", puts: [(account.id, .account(account))])
            var ids: [UUID] = []
            for day in 1...40 {
                let update = ValueUpdate(accountID: account.id, date: try CalendarDate(parsing: String(format: "2025-02-%02d", day % 28 + 1)),
                                         amount: Money(minorUnits: Int64(day * 100)), sequence: UInt64(day))
                let spend = Transaction(amount: Money(minorUnits: 250), type: .expense, target: .uncategorised, note: "shop \(day)",
                                        date: try CalendarDate(parsing: "2025-02-10"), sequence: UInt64(day))
                ids.append(spend.id)
                try ledger.commit("day \(day)", puts: [(update.id, .update(update)), (spend.id, .transaction(spend))])
                #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after commit \(day)")
            }
            try ledger.commit("delete", deletes: Array(ids.prefix(5)))
            #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)))
            for _ in 0..<3 {
                _ = try ledger.undo()
                #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after undo")
            }

            // A large write (new records, replaced ones, deletions, an id written twice in one batch:
            // the later wins), and undoing it, which patches the ledger with that id twice.
            let moreAccounts = (0..<30).map { Account(name: "Account \($0)", category: "Savings", kind: .asset, created: try! CalendarDate(parsing: "2025-01-01")) }
            var big: [(UUID, FinanceRecord)] = moreAccounts.map { ($0.id, .account($0)) }
            big += try (0..<600).map { index in
                let spend = Transaction(amount: Money(minorUnits: Int64(index + 1)), type: .expense, target: .uncategorised, note: "bulk \(index)",
                                        date: try CalendarDate(parsing: "2025-03-01"), sequence: UInt64(100 + index))
                return (spend.id, .transaction(spend))
            }
            let replaced = Transaction(id: ids[10], amount: Money(minorUnits: 999), type: .expense, target: .uncategorised, note: "replaced",
                                       date: try CalendarDate(parsing: "2025-02-10"), sequence: 7)
            big.append((ids[10], .transaction(replaced)))
            big.append((ids[10], .transaction(Transaction(id: ids[10], amount: Money(minorUnits: 1000), type: .expense, target: .uncategorised, note: "replaced twice",
                                                          date: try CalendarDate(parsing: "2025-02-10"), sequence: 7))))
            try ledger.commit("bulk", puts: big, deletes: Array(ids[20..<30]))
            #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after a large write")
            #expect(ledger.transactions.first { $0.id == ids[10] }?.note == "replaced twice")
            _ = try ledger.undo()
            #expect(snapshot(ledger) == snapshot(try Ledger(vault: vault)), "after undoing a large write")
        }
    }
}

@Suite struct WholeVaultDecodeTests {
    @Test func anUnreadableTransactionAmongThousandsIsNamed() throws {
        try withScratchVault { vault in
            var changes: [RecordChange] = []
            for day in 0..<9000 {
                let spend = Transaction(amount: Money(minorUnits: 100), type: .expense, target: .uncategorised, note: "n\(day)",
                                        date: CalendarDate(dayNumber: 20000 + day % 300), sequence: UInt64(day))
                changes.append(.put(RecordID(uuid: spend.id), Data(RecordCodec.encode(.transaction(spend)))))
            }
            let ledger = try Ledger(vault: { try vault.apply(changes); return vault }())
            #expect(ledger.transactions.count == 9000)
            #expect(Set(ledger.transactions.map(\.id)).count == 9000)

            let broken = RecordID.random()
            try vault.apply([.put(broken, Data([10, 2, 0xff]))])  // a transaction cut short
            do {
                _ = try Ledger(vault: vault)
                Issue.record("an unreadable record must stop the ledger")
            } catch let error as CLIError {
                #expect(error.status == .damaged && error.message.contains(broken.hex))
            }
        }
    }
}

/// Runs `body` on a new vault (interactive Argon2id) in a folder of its own, removed afterwards.
func withScratchVault(_ body: (Vault) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-scratch-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try body(try Vault.create(at: folder.appendingPathComponent("v.coffer"), passphrase: try Passphrase("scratch"),
                              parameters: KDFProfile.interactive.parameters))
}

/// The import reads big exports on every core; it must read exactly what `JSONDecoder` reads and
/// refuse exactly what it refuses.
@Suite struct ExportDocumentReaderTests {
    /// Notes full of the characters the boundary scan has to step over.
    static let awkward = ["plain", "a ] b } c", "quote \" inside", "back\\slash\\", "[{\"key\": [1, 2]}]", "ünïcødé ✓", "tab\tand\nnewline"]

    func document() -> ExportDocument {
        var document = ExportDocument(currency: "GBP", includeReceivables: true)
        let account = UUID().uuidString.lowercased()
        document.accounts = [.init(id: account, name: "Bank", category: "Savings", kind: "asset", growth: nil, created: "2020-01-01", closed: nil)]
        document.updates = (0..<9_000).map { index in
            .init(id: UUID().uuidString.lowercased(), account: account, date: "2024-01-01", amount: "\(index).50",
                  sequence: UInt64(index), note: index % 3 == 0 ? Self.awkward[index % Self.awkward.count] : nil)
        }
        document.transactions = (0..<12_000).map { index in
            .init(id: UUID().uuidString.lowercased(), amount: "\(index % 500).25", type: "expense",
                  target: .init(kind: "uncategorised", id: nil), note: Self.awkward[index % Self.awkward.count], date: "2025-03-04",
                  sequence: UInt64(index), importAccount: index % 2 == 0 ? "Current" : nil, importHash: index % 2 == 0 ? "00ff" : nil)
        }
        document.invoices = (0..<300).map { index in
            .init(id: UUID().uuidString.lowercased(), number: index + 1, client: UUID().uuidString.lowercased(),
                  items: [.init(description: "Work ]}", quantity: "1", unitPrice: "10.00")], tax: nil, issued: "2025-01-01", due: "2025-01-31",
                  notes: nil, status: "sent", sentOn: "2025-01-01", voidedOn: nil, payments: [])
        }
        return document
    }

    func canonical(_ document: ExportDocument) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(document)
    }

    @Test(arguments: [false, true]) func readsWhatJSONDecoderReads(prettyPrinted: Bool) throws {
        let encoder = JSONEncoder()
        if prettyPrinted { encoder.outputFormatting = [.prettyPrinted] }
        let data = try encoder.encode(document())
        #expect(data.count >= ExportDocumentReader.parallelThreshold, "the document must be big enough to take the parallel path")
        let parallel = try #require(ExportDocumentReader.decodeInParallel(data))
        let plain = try JSONDecoder().decode(ExportDocument.self, from: data)
        #expect(try canonical(parallel) == canonical(plain))
        #expect(parallel.transactions?.count == 12_000 && parallel.updates?.count == 9_000 && parallel.invoices?.count == 300)
    }

    @Test func refusesWhatJSONDecoderRefuses() throws {
        // Sorted keys: the damage below looks for text after the transactions array, which an
        // unordered encoding may place last (so some runs found nothing to damage and trapped).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let valid = String(decoding: try encoder.encode(document()), as: UTF8.self)
        /// `valid` with the first `target` after the transactions array starts replaced.
        func damage(_ target: String, _ replacement: String) -> String {
            let start = valid.range(of: "\"transactions\":[")!.upperBound
            let found = valid.range(of: target, range: start..<valid.endIndex)!
            return valid.replacingCharacters(in: found, with: replacement)
        }
        let damaged = [
            "truncated": String(valid.dropLast(200)),
            "a number where an amount string belongs": damage("\"amount\":\"499.25\"", "\"amount\":499.25"),
            "a brace closing an array": damage("}],", "}},"),
            "a missing comma between elements": damage("},{", "}{"),
            "a stray bracket between elements": damage("},{", "}],[{"),
            "trailing garbage": valid + "]",
            "a control character in a string": damage("a ] b } c", "a \u{01} b"),
        ]
        for (name, text) in damaged {
            let data = Data(text.utf8)
            #expect(data != Data(valid.utf8), "\(name): the damage must change the document")
            #expect(ExportDocumentReader.decodeInParallel(data) == nil, "\(name)")
            var refused = false
            do { _ = try ExportDocumentReader.decode(data) } catch is DecodingError { refused = true }
            #expect(refused, "\(name): the ordinary decoder must refuse it too")
        }
    }
}
