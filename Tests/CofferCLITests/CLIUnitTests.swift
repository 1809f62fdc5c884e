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
