import CofferKit
import FinanceCore
import Foundation
import Hummingbird
import Plot

/// The devices half of Backups & devices: the sync folder, what waits to be published and
/// merged, each device and when it was last heard from, Sync now (`coffer sync`), and the
/// kept conflicts with Restore (`coffer sync conflicts restore N`).
enum DevicesSection {
    static func add(to router: Router<WebContext>, _ state: WebState) {
        router.post("/sync") { _, context in
            try await WebVault.change(
                state, context, back: "/backups#devices",
                again: { try await BackupsPage.show(state, context, banner: $0) }
            ) { ledger in
                let report: SyncReport
                do {
                    report = try SyncService.sync(ledger)
                } catch let error as CofferError where error.code == .keysChanged {
                    throw WebRefusal(
                        status: .conflict,
                        message:
                            "\(error.message) Run coffer sync in a terminal: it asks for the passphrase to take the new keys on."
                    )
                }
                let lines = report.summaryLines + report.attentionLines
                let rejected = report.rejectedCount
                return .init(
                    text: (lines
                        + (rejected > 0
                            ? [
                                "\(rejected) file\(rejected == 1 ? " was" : "s were") rejected; everything else was merged."
                            ]
                            : []))
                        .joined(separator: " "),
                    undoable: false, problem: rejected > 0)
            }
        }
        router.post("/sync/conflicts/:number/restore") { _, context in
            guard let number = context.parameters.get("number").flatMap(Int.init) else {
                throw WebRefusal(status: .notFound, message: "There is no such conflict.")
            }
            return try await WebVault.change(
                state, context, back: "/backups#devices",
                again: { try await BackupsPage.show(state, context, banner: $0) }
            ) { ledger in
                let restored = try SyncService.restoreConflict(ledger, number: number)
                return .init(text: "Restored \(restored.record) as \(restored.loserDevice) had it.", undoable: true)
            }
        }
    }

    /// The section, or how to start syncing when this vault has no sync folder.
    static func section(_ ledger: Ledger, csrf: String) -> Node<HTML.BodyContext> {
        guard ledger.syncState != nil else {
            return .section(
                .id("devices"), .h2("Devices"),
                .p(
                    .text(
                        "This vault is on this device only. To keep it on several, point a folder your sync tool carries (Syncthing, Dropbox, a USB stick) at it: coffer sync init DIR here, then coffer device join DIR on the other device."
                    )))
        }
        let status: SyncStatus
        do {
            status = try SyncService.status(ledger)
        } catch {
            return .section(
                .id("devices"), .h2("Devices"),
                .p(HTMLText.node((error as? LocalizedError)?.errorDescription ?? "The sync folder cannot be read.")))
        }
        let conflicts = SyncService.conflicts(ledger)
        let formatter = ISO8601DateFormatter()
        return .section(
            .id("devices"),
            .h2("Devices"),
            .p(HTMLText.node("Sync folder: \(status.folder) (key generation \(status.keyGeneration))")),
            .unwrap(status.newerKeyGeneration) { newer in
                .p(
                    .strong("⚠ "),
                    .text(
                        "The vault's keys were replaced on another device (key generation \(newer)): run coffer sync in a terminal to take them on with the passphrase."
                    ))
            },
            .p(
                .text(
                    status.localChanges == 0
                        ? "To publish: nothing."
                        : "To publish: \(status.localChanges) record\(status.localChanges == 1 ? "" : "s") changed here."
                )),
            ReportHTML.table(
                caption: "Devices", header: ["Device", "Last heard from", "Pending"],
                rows: status.devices.map { device in
                    [
                        device.name + (device.isThisDevice ? " (this device)" : ""),
                        device.lastHeard.map { SyncStatus.ago($0) } ?? "never",
                        device.isThisDevice
                            ? "#\(device.sequence) published"
                            : "\(device.filesToMerge) file\(device.filesToMerge == 1 ? "" : "s") to merge",
                    ]
                }),
            .form(
                .action("/sync"), .method(.post), .attribute(named: "data-busy", value: "Syncing…"),
                Layout.csrfField(csrf),
                .button(.type(.submit), .text("Sync now"))),
            .h3("Conflicts"),
            .if(conflicts.isEmpty, .p(.text("No conflicts: no two devices edited the same record at once."))),
            .if(
                !conflicts.isEmpty,
                .table(
                    .class("stack"),
                    .thead(
                        .tr(
                            .th("#"), .th("Record"), .th("Lost"), .th("Kept"), .th("What differs"),
                            .th(.span(.class("visually-hidden"), "Restore")))),
                    .tbody(
                        .forEach(conflicts) { conflict in
                            .tr(
                                .td(.text("#\(conflict.number)")),
                                .td(HTMLText.node(conflict.record)),
                                .td(
                                    HTMLText.node(
                                        "\(conflict.loser) on \(conflict.loserDevice), \(formatter.string(from: conflict.loserTime))"
                                    )),
                                .td(
                                    HTMLText.node(
                                        "\(conflict.winner) on \(conflict.winnerDevice), \(formatter.string(from: conflict.winnerTime))"
                                    )),
                                .td(
                                    conflict.fields.isEmpty
                                        ? .text("")
                                        : .ul(.forEach(conflict.fields) { .li(HTMLText.node($0.line)) })),
                                .td(
                                    conflict.restored
                                        ? .text("restored")
                                        : .form(
                                            .action("/sync/conflicts/\(conflict.number)/restore"), .method(.post),
                                            Layout.csrfField(csrf),
                                            .button(
                                                .type(.submit), .class("secondary"),
                                                .attribute(
                                                    named: "aria-label",
                                                    value: "Restore the lost value of conflict \(conflict.number)"),
                                                .text("Restore")))))
                        })))
        )
    }
}
