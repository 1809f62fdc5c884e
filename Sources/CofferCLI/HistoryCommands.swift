import ArgumentParser
import CofferKit
import FinanceCore
import Foundation
import VaultStore

/// `coffer log`: what changed when.
struct Log: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "List recent changes, newest first.")
    @OptionGroup var options: VaultOptions
    @OptionGroup var report: ReportOptions
    @Option(help: "How many changes to show.") var limit: Int = 20

    struct Row: Encodable { let sequence: UInt64; let time: String; let summary: String }

    func run() throws {
        guard limit > 0 else { throw CLIError(.invalidInput, "--limit must be at least 1.") }
        let ledger = try options.openLedger()
        let formatter = ISO8601DateFormatter()
        let rows = ledger.changes.reversed().prefix(limit).map {
            Row(
                sequence: $0.entry.sequence,
                time: formatter.string(from: Date(timeIntervalSince1970: TimeInterval($0.entry.timestamp))),
                summary: $0.entry.summary)
        }
        if report.json { return try Output.json(["changes": rows]) }
        guard !rows.isEmpty else {
            Output.line("No changes yet. Every change you make is listed here and can be undone with coffer undo.")
            return
        }
        Render.table(rows.map { ["#\($0.sequence)", $0.time, $0.summary] }).forEach { Output.line($0) }
        Output.advice("Next: coffer undo (reverts #\(rows[0].sequence))")
    }
}

/// `coffer undo`: revert the last change; repeat to go further back.
struct Undo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo",
        abstract: "Revert the most recent change (repeat to go further back).")
    @OptionGroup var options: VaultOptions

    func run() throws {
        let ledger = try options.openLedger()
        guard let undone = try ledger.undo() else {
            Output.line("Nothing to undo.")
            return
        }
        Output.line("Undone: \(undone.summary)")
        if let next = ledger.changes.last {
            Output.advice("Next: coffer redo puts it back · coffer undo again reverts \"\(next.entry.summary)\"")
        } else {
            Output.advice("Next: coffer redo puts it back")
        }
    }
}

/// `coffer redo`: make again what `undo` took back, most recent first, until a new change.
struct Redo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redo",
        abstract: "Make again the change the last undo reverted (repeat to go further).",
        discussion: """
            Any new change forgets what could be redone, as in an editor. Refused (nothing changes) \
            when a record the change touched was changed since the undo, e.g. by a sync.
            """)
    @OptionGroup var options: VaultOptions

    func run() throws {
        let ledger = try options.openLedger()
        guard let redone = try ledger.redo() else {
            Output.line("Nothing to redo.")
            return
        }
        Output.line("Redone: \(redone.summary)")
        if let next = ledger.undoneChanges.last {
            Output.advice("Next: coffer redo again makes \"\(next.undone.change.summary)\" · coffer undo reverts it")
        } else {
            Output.advice("Undo with: coffer undo")
        }
    }
}
