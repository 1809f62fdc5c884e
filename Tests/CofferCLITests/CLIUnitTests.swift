import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferCLI

@Suite struct DurationTests {
    @Test(arguments: [
        ("90s", 90.0), ("15m", 900.0), ("2h", 7200.0), ("1h30m", 5400.0), ("1H", 3600.0), ("24h", 86400.0), ("1s", 1.0),
    ])
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
        #expect(
            PassphraseSource.firstLine(Array("  spaced  ".utf8)) == Array("  spaced  ".utf8),
            "spaces are part of a passphrase")
    }

    @Test func environmentVariableIsASource() throws {
        let passphrase = try PassphraseSource.passphrase(
            file: nil, command: nil, environmentVariable: "COFFER_PASSPHRASE",
            environment: ["COFFER_PASSPHRASE": "from env"], prompt: "", confirm: false)
        #expect(passphrase.byteCount == 8)
    }

    @Test func missingFileIsInvalidInput() {
        #expect(throws: CLIError.self) {
            try PassphraseSource.passphrase(
                file: "/nonexistent/passphrase", command: nil, environmentVariable: "X",
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
        #expect(
            [
                CofferCLI.ExitStatus.ok, .failure, .invalidInput, .damaged, .notFound, .cannotCreate, .ioError,
                .noPermission,
            ].map(\.rawValue) == [0, 1, 64, 65, 66, 73, 74, 77])
    }

    @Test func integrityProblemsBecomeDetailLines() throws {
        let id = RecordID.random()
        let error = CLIError(
            VaultError(
                .integrityFailure, "damaged",
                problems: [
                    IntegrityProblem(kind: .recordMissing, recordID: id, detail: "is missing")
                ]))
        #expect(error.details == ["record \(id.hex): is missing"])
    }
}

@Suite struct GlobalOptionPlacementTests {
    @Test(arguments: [
        (["--vault", "v", "init", "--kdf", "interactive"], ["init", "--vault", "v", "--kdf", "interactive"]),
        (["--vault=v", "passphrase", "change"], ["passphrase", "change", "--vault=v"]),
        (
            ["--passphrase-file", "p", "--vault", "v", "recovery-key", "create"],
            ["recovery-key", "create", "--passphrase-file", "p", "--vault", "v"]
        ),
        (["status", "--vault", "v"], ["status", "--vault", "v"]),
        (["--vault"], ["--vault"]),
        (["--help"], ["--help"]),
    ])
    func movesLeadingGlobalOptionsAfterTheSubcommand(input: [String], expected: [String]) {
        #expect(GlobalOptionPlacement.normalise(input) == expected)
    }
}

/// Display width as terminals count cells, and tables and prose fitted to a width with it.
@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("Groceries", 9), ("ユニクロ 銀座", 13), ("😀", 2), ("café", 4), ("cafe\u{301}", 4), ("👨‍👩‍👧", 2), ("🇬🇧", 2),
        ("１２", 4), ("\u{1B}[1mbold\u{1B}[0m", 4), ("£1,234.50", 9), ("1.234,50\u{A0}€", 10), ("❤️", 2),
    ])
    func countsCells(text: String, cells: Int) {
        #expect(DisplayWidth.of(text) == cells, "\(text)")
    }

    @Test func tablesAlignWideCharactersByCells() {
        let lines = Render.table(
            [["ユニクロ 銀座 😀", "£12.00"], ["Tesco", "£3.50"]], rightAligned: [1], width: 80)
        #expect(lines.map(DisplayWidth.of) == [2 + 16 + 2 + 6, 2 + 16 + 2 + 6], "\(lines)")
        #expect(lines[1].hasSuffix(" £3.50"))
    }

    /// At 40 columns a table cuts its text columns (never an amount), then drops trailing text
    /// columns; nothing is wider than the screen.
    @Test func tablesFitANarrowScreenWithoutCuttingAmounts() {
        let rows = [
            ["Account", "Category", "Value", "Updated", "Status"],
            ["Vanguard Stocks & Shares ISA", "Investments", "£21,451.85", "2026-11-22", "open"],
            ["Nationwide Mortgage", "Mortgage", "-£178,751.85", "2026-11-22", "owed"],
        ]
        let lines = Render.table(rows, rightAligned: [2], width: 40)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 40 }, "\(lines.joined(separator: "\n"))")
        #expect(lines[1].contains("£21,451.85") && lines[2].contains("-£178,751.85"))
        #expect(lines[1].contains("…"), "the long name is cut")
        // Wide enough: nothing cut.
        #expect(!Render.table(rows, rightAligned: [2], width: 120).joined().contains("…"))
    }

    @Test func proseWrapsAtSpacesAndKeepsItsIndent() {
        let text = "  Budget: £805.00 remaining in November 2026, leave some for the holidays please"
        let lines = DisplayWidth.wrapped(text, to: 40)
        #expect(lines.allSatisfy { DisplayWidth.of($0) <= 40 }, "\(lines)")
        #expect(lines.allSatisfy { $0.hasPrefix("  ") })
        #expect(lines.joined(separator: " ").split(separator: " ") == text.split(separator: " "), "no word split")
        #expect(lines.contains { $0.contains("£805.00") })
    }
}

/// Amounts shown by Foundation's currency formatting: each currency as its own locale writes
/// it, or as the person's locale does when one is set; what is shown parses back.
@Suite(.serialized) struct AmountDisplayTests {
    /// The locale is scoped to this test's task (`Currency.$scopedLocale`), never set for the
    /// process: other tests show amounts at the same time.
    @Test func eachCurrencyInItsOwnConventionsAndTheUsersWhenSet() throws {
        func shown(in identifier: String?, _ body: () throws -> Void) throws {
            try Currency.$scopedLocale.withValue(.some(identifier.map { Locale(identifier: $0) }), operation: body)
        }
        let amount = Money(minorUnits: -123_456)
        let euro = try Currency.named("EUR")
        try shown(in: nil) { () throws in
            #expect(Currency.gbp.format(amount) == "-£1,234.56")
            #expect(try Currency.named("EUR").format(amount) == "-1.234,56\u{A0}€")
            #expect(try Currency.named("USD").format(amount) == "-$1,234.56")
            #expect(
                try Currency.named("JPY").format(Money(minorUnits: 1234)) == "￥1,234"
                    || (try Currency.named("JPY").format(Money(minorUnits: 1234))) == "¥1,234")
        }
        try shown(in: "de_DE") { () throws in
            #expect(Currency.gbp.format(amount) == "-1.234,56\u{A0}£")
            // What is shown reads back.
            #expect(try euro.parse(euro.format(Money(minorUnits: 123_456))) == Money(minorUnits: 123_456))
            #expect(try Currency.gbp.parse("12,50") == Money(minorUnits: 1250), "a German locale reads a decimal comma")
        }
        // Every locale's way of showing an amount reads back: grouping with spaces, no-break
        // spaces or apostrophes, and Foundation's own symbol before or after.
        for identifier in ["fr_FR", "de_CH", "en_IN", "sv_SE", "de_DE", "en_GB"] {
            try shown(in: identifier) { () throws in
                for currency in [Currency.gbp, try Currency.named("EUR"), try Currency.named("CHF")] {
                    let amount = Money(minorUnits: 123_456_789)
                    #expect(
                        try currency.parse(currency.format(amount)) == amount,
                        "\(identifier) \(currency.format(amount))")
                }
            }
        }
        try shown(in: nil) { () throws in
            #expect(try Currency.named("CHF").parse("CHF 1’234.50") == Money(minorUnits: 123_450))
            // The ambiguous comma's message suggests two amounts that both read.
            do {
                _ = try euro.parse("1,234")
                Issue.record("1,234 in EUR is ambiguous")
            } catch let error as FinanceError {
                let message = error.errorDescription ?? ""
                #expect(message.contains("write 1234 or 1.234,00."), "\(message)")
                #expect(try euro.parse("1.234,00") == Money(minorUnits: 123_400))
            }
        }
        for category in ["LC_MONETARY", "LC_NUMERIC"] {
            #expect(PersonLocale.fromEnvironment(for: category, ["LANG": "C.UTF-8"]) == nil)
            #expect(PersonLocale.fromEnvironment(for: category, ["LANG": "de_DE.UTF-8"])?.identifier == "de_DE")
            #expect(
                PersonLocale.fromEnvironment(for: category, ["LANG": "de_DE.UTF-8", category: "fr_FR.UTF-8"])?
                    .identifier == "fr_FR")
            #expect(
                PersonLocale.fromEnvironment(for: category, ["LC_ALL": "en_GB.UTF-8", category: "fr_FR.UTF-8"])?
                    .identifier == "en_GB")
            #expect(PersonLocale.fromEnvironment(for: category, ["LC_ALL": "POSIX", "LANG": "de_DE.UTF-8"]) == nil)
        }
        // Each category is its own: LC_NUMERIC does not change how amounts are shown.
        #expect(PersonLocale.fromEnvironment(for: "LC_MONETARY", ["LC_NUMERIC": "de_DE.UTF-8"]) == nil)
    }
}

/// Every command names itself: without a name, ArgumentParser derives one from the type's name
/// through reflection at every start, which measured about 15 ms of each command's 60.
@Suite struct CommandNameTests {
    @Test func everyCommandHasAnExplicitName() {
        var unnamed: [String] = []
        func walk(_ command: any ParsableCommand.Type) {
            if command.configuration.commandName == nil { unnamed.append("\(command)") }
            command.configuration.subcommands.forEach(walk)
        }
        walk(Coffer.self)
        #expect(unnamed.isEmpty, "give these a commandName: \(unnamed)")
    }
}
