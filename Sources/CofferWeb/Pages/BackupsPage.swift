import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot
import VaultBackup
import VaultStore

/// Backups: where they go and how old the newest verified one is there, a backup made now
/// (each archive read back and verified before it counts, as `coffer backup create` does), the
/// archives in each folder with their signature status, and a full verification of one.
enum BackupsPage {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.get("/backups") { _, context in try await show(state, context) }
        router.post("/backups") { _, context in try await create(state, context) }
        // Read while a backup is made (not on the vault queue, which the backup holds).
        router.get("/backups/progress") { _, _ in
            let body = try JSONEncoder().encode(state.backupProgress)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.post("/backups/targets") { _, context in
            struct Form: Decodable { let path: String }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/backups", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                guard form.path.hasPrefix("/") else {
                    throw CofferError(.invalidInput, "Give the folder's full path, starting with /.")
                }
                let path = try ledger.addBackupTarget(URL(fileURLWithPath: form.path))
                return .init(text: "Backups will go to \(path).", undoable: true)
            }
        }
        router.post("/backups/targets/remove") { _, context in
            struct Form: Decodable { let path: String }
            let form = try context.decodeForm(Form.self)
            return try await WebVault.change(
                state, context, back: "/backups", again: { try await show(state, context, banner: $0) }
            ) { ledger in
                let path = try ledger.removeBackupTarget(URL(fileURLWithPath: form.path))
                return .init(text: "No longer backing up to \(path); its archives were left in place.", undoable: true)
            }
        }
        router.post("/backups/verify") { _, context in try await verify(state, context) }
    }

    private static func trust(_ ledger: Ledger, folders: [String], vaultURL: URL) throws -> BackupTrust {
        try BackupService.trust(
            keyFiles: [], vaultURL: vaultURL, vault: ledger.vault,
            folders: folders.map { URL(fileURLWithPath: $0) }, notice: { _ in })
    }

    static func show(_ state: WebState, _ context: WebContext, banner: Layout.Banner? = nil) async throws -> Response {
        let today = state.today
        let configured = state.settings.configuredBackupTargets
        return try await WebVault.page(state, context, view: .overview(on: today), banner: banner) { ledger, banner in
            let destinations = ledger.backupDestinations(configured: configured)
            let saved = Set(ledger.backupTargets.values.map(\.path))
            let ages = Dictionary(ledger.backupAges().map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
            let trust = try trust(ledger, folders: destinations, vaultURL: state.settings.vaultURL)
            return Layout.page(
                title: "Backups & devices", area: .backups, csrf: context.csrf, banner: banner,
                .group(
                    .h1("Backups & devices"),
                    .if(
                        destinations.isEmpty,
                        .p(
                            .text(
                                "No backups yet. Add a folder on another drive (a USB stick, a synced folder), then make your first backup."
                            ))),
                    .if(
                        !destinations.isEmpty,
                        .section(
                            .class("hero"),
                            .ul(
                                .forEach(destinations) { path in
                                    .li(HTMLText.node(ageLine(ages[path], path: path)))
                                }),
                            .form(
                                .action("/backups"), .method(.post),
                                .attribute(named: "data-busy", value: "Making the backup…"),
                                .attribute(named: "data-progress", value: "/backups/progress"),
                                Layout.csrfField(context.csrf),
                                .p(
                                    .class("hint"),
                                    .text(
                                        "One compressed, encrypted, signed archive in each folder, read back and verified before it counts."
                                    )),
                                .button(.type(.submit), .text("Make a backup now")),
                                .p(.class("hint"), .attribute(named: "role", value: "status"))))),
                    .forEach(destinations) { folder in
                        archives(folder, trust: trust, saved: saved.contains(folder), csrf: context.csrf)
                    },
                    .section(
                        .h2("Add a backup folder"),
                        .form(
                            .action("/backups/targets"), .method(.post), Layout.csrfField(context.csrf),
                            Layout.field(
                                "Folder", name: "path", hint: "Its full path, for example /media/usb/coffer."),
                            .button(
                                .type(.submit), .class(destinations.isEmpty ? "" : "secondary"), .text("Add folder")))),
                    DevicesSection.section(ledger, csrf: context.csrf)
                ))
        }
    }

    private static func ageLine(_ age: BackupAge?, path: String) -> String {
        guard let when = age?.ageText else { return "⚠ Never backed up to \(path)." }
        return age?.isStale == true
            ? "⚠ Last verified backup to \(path) was \(when): over \(BackupAge.staleAfterDays) days ago."
            : "✓ Last verified backup to \(path): \(when)."
    }

    private static func archives(_ folder: String, trust: BackupTrust, saved: Bool, csrf: String)
        -> Node<HTML.BodyContext>
    {
        let entries = BackupFolder.scan(URL(fileURLWithPath: folder), trust: trust.keys).reversed()
        let formatter = ISO8601DateFormatter()
        return .section(
            .h2(HTMLText.node(folder)),
            .if(
                entries.isEmpty,
                .p(
                    .text(
                        FileManager.default.fileExists(atPath: folder)
                            ? "No archives here yet." : "This folder is not there now (is the drive mounted?)."))),
            .if(
                !entries.isEmpty,
                .table(
                    .class("stack"),
                    .thead(.tr(.th("Archive"), .th("Status"), .th(.span(.class("visually-hidden"), "Check")))),
                    .tbody(
                        .forEach(Array(entries)) { entry in
                            let size = ByteCountFormatter.string(fromByteCount: Int64(entry.size), countStyle: .file)
                            let made =
                                entry.info.map {
                                    "#\($0.sequence) · \(madeText(formatter.string(from: $0.created))) · "
                                } ?? ""
                            return .tr(
                                .td(
                                    .text(made + size),
                                    .br(),
                                    .span(.class("muted file"), HTMLText.node(entry.url.lastPathComponent))),
                                .td(HTMLText.node(trust.label(entry))),
                                .td(
                                    .if(
                                        entry.status == .signed,
                                        .form(
                                            .action("/backups/verify"), .method(.post),
                                            .attribute(named: "data-busy", value: "Checking…"),
                                            Layout.csrfField(csrf),
                                            .input(
                                                .type(.hidden), .name("file"),
                                                .value(HTMLText.attribute(entry.url.path))),
                                            .button(
                                                .type(.submit), .class("secondary"),
                                                .attribute(
                                                    named: "aria-label",
                                                    value: HTMLText.attribute(
                                                        "Verify \(entry.url.lastPathComponent) fully")),
                                                .text("Verify"))))))
                        }))),
            .if(
                saved,
                .form(
                    .action("/backups/targets/remove"), .method(.post), Layout.csrfField(csrf),
                    .input(.type(.hidden), .name("path"), .value(HTMLText.attribute(folder))),
                    .button(
                        .type(.submit), .class("secondary"),
                        .attribute(named: "aria-label", value: HTMLText.attribute("Stop backing up to \(folder)")),
                        .text("Stop backing up here"))))
        )
    }

    /// "2026-12-06 22:41:47 UTC" from an ISO 8601 time.
    private static func madeText(_ iso: String) -> String {
        iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    /// `coffer backup create` without `--to`: every destination, each archive verified.
    private static func create(_ state: WebState, _ context: WebContext) async throws -> Response {
        let today = state.today
        let settings = state.settings
        return try await WebVault.change(
            state, context, view: .overview(on: today), back: "/backups",
            again: { try await show(state, context, banner: $0) }
        ) { ledger in
            let targets = ledger.backupDestinations(configured: settings.configuredBackupTargets)
            guard !targets.isEmpty else {
                throw CofferError(.invalidInput, "There is no backup folder yet: add one below.")
            }
            if let current = ledger.vault.keyHistory.last {
                try Data(Archive.publicKeyFileContents(current, vaultID: ledger.vault.id).utf8).write(
                    to: BackupService.publicKeyURL(for: settings.vaultURL), options: .atomic)
            }
            let outcomes: [(folder: URL, outcome: BackupService.Outcome)]
            state.backupStarted()
            defer { state.backupEnded() }
            do {
                outcomes = try BackupService.create(
                    ledger, to: targets.map { URL(fileURLWithPath: $0) }, appVersion: settings.appVersion,
                    today: today, acceptRollback: false, progress: state.backupStep, notice: { _ in })
            } catch let error as CofferError where error.code == .rolledBack || error.kind == "sequence" {
                throw WebRefusal(
                    status: .conflict,
                    message: "\(error.message) Run coffer backup create in a terminal to see the choices.")
            }
            let lines = outcomes.map { folder, outcome -> String in
                switch outcome {
                case .written(let url, let records, let size):
                    "Backup OK: \(url.lastPathComponent) in \(folder.path) (\(records) records, \(ByteCountFormatter.string(fromByteCount: Int64(size), countStyle: .file)), read back and verified)."
                case .missingFolder:
                    "FAILED \(folder.path): no such folder (is the drive mounted?). Nothing was written there."
                case .writeFailed(let reason):
                    "FAILED \(folder.path): \(reason). No archive with a final name was left."
                case .verifyFailed(let reason):
                    "FAILED \(folder.path): the archive did not verify when read back (\(reason)); it was removed."
                }
            }
            let failed = outcomes.contains {
                if case .written = $0.outcome { return false }
                return true
            }
            return .init(text: lines.joined(separator: " "), undoable: false, problem: failed)
        }
    }

    /// `coffer backup verify --full` of one archive in a backup folder, with the held keys.
    private static func verify(_ state: WebState, _ context: WebContext) async throws -> Response {
        struct Form: Decodable { let file: String }
        let form = try context.decodeForm(Form.self)
        let today = state.today
        let configured = state.settings.configuredBackupTargets
        return try await WebVault.change(
            state, context, view: .overview(on: today), back: "/backups",
            again: { try await show(state, context, banner: $0) }
        ) { ledger in
            let url = URL(fileURLWithPath: form.file).standardizedFileURL
            let folders = ledger.backupDestinations(configured: configured)
            guard url.pathExtension == "cbak",
                folders.contains(where: {
                    URL(fileURLWithPath: $0).standardizedFileURL.path == url.deletingLastPathComponent().path
                }),
                FileManager.default.fileExists(atPath: url.path)
            else { throw CofferError(.noMatch, "That is not an archive in one of the backup folders.") }
            guard let keys = state.keys else { throw WebVault.Locked() }
            let info: ArchiveInfo
            do {
                info = try Archive.verify(
                    at: url,
                    trust: trust(
                        ledger, folders: [url.deletingLastPathComponent().path], vaultURL: state.settings.vaultURL
                    ).keys)
                let archive = try BackupService.inspect(url, vaultURL: state.settings.vaultURL)
                _ = try BackupService.open(BackupService.unlock(archive, credential: .held(keys)))
            } catch let error as CofferError where error.code == .wrongCredential {
                return .init(
                    text:
                        "\(url.lastPathComponent) was made under an earlier passphrase or key: check it with coffer backup verify --full \(url.path), which asks for that passphrase.",
                    undoable: false, problem: true)
            } catch let error as LocalizedError {
                return .init(
                    text: "\(url.lastPathComponent) did not verify: \(error.errorDescription ?? "it is damaged").",
                    undoable: false, problem: true)
            }
            return .init(
                text:
                    "Archive OK: \(url.lastPathComponent), #\(info.sequence): signature, every chunk and every record decrypted and checked against its manifest.",
                undoable: false)
        }
    }
}
