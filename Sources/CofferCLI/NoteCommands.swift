import ArgumentParser
import CofferKit
import FinanceCore
import Foundation

/// `coffer note add|edit|show|list|rm`: private free text kept encrypted beside the finances
/// (account numbers, where the will is, a draft letter to the bank). A body never comes from the
/// command line, where shell history and `ps` would keep it: it comes from `$EDITOR`, on a file
/// in a RAM-backed folder (`NoteEditor`), or from standard input (`--stdin`).
struct NoteCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "note",
        abstract: "Keep private notes beside your money: account numbers, where the will is, a draft letter.",
        subcommands: [Add.self, Edit.self, Show.self, List.self, Remove.self])

    /// Where a note's text comes from.
    struct BodyOptions: ParsableArguments {
        @Flag(
            help:
                "Read the note's text from standard input (UTF-8, at most 64 KiB) instead of opening $EDITOR.")
        var stdin = false
        @Flag(
            help:
                "Let $EDITOR's file be written to a disk-backed $XDG_RUNTIME_DIR, where the plaintext could be recovered later."
        )
        var allowDisk = false

        /// Standard input as the body: UTF-8, at most `Ledger.noteBodyLimit` bytes (64).
        func readStandardInput() throws -> String {
            let limit = Ledger.noteBodyLimit
            let data = FileHandle.standardInput.readData(ofLength: limit + 1)
            guard data.count <= limit else {
                throw CLIError(
                    .invalidInput, "A note holds at most \(limit / 1024) KiB of text; standard input has more.",
                    hint: "Nothing was changed.")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw CLIError(
                    .invalidInput, "The note's text must be UTF-8; standard input is not.",
                    hint: "Nothing was changed. Convert it with iconv.")
            }
            return text
        }
    }

    /// What a note is attached to: at most one of an account, a client or an invoice.
    struct AttachOptions: ParsableArguments {
        @Option(help: ArgumentHelp("Attach the note to this account.", valueName: "name")) var account: String?
        @Option(help: ArgumentHelp("Attach the note to this client.", valueName: "name")) var client: String?
        @Option(help: ArgumentHelp("Attach the note to this invoice (INV-0007, 0007 or 7).", valueName: "id"))
        var invoice: String?

        var given: Bool { account != nil || client != nil || invoice != nil }

        func attachment(in ledger: Ledger) throws -> Note.Attachment? {
            guard [account, client, invoice].compactMap({ $0 }).count <= 1 else {
                throw CLIError(
                    .invalidInput, "Attach a note to one thing: give one of --account, --client or --invoice.",
                    hint: "Nothing was changed.")
            }
            if let account { return .init(kind: .account, id: try ledger.account(named: account).id) }
            if let client { return .init(kind: .client, id: try ledger.client(named: client).id) }
            if let invoice { return .init(kind: .invoice, id: try ledger.invoice(invoice).id) }
            return nil
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a note: its text from $EDITOR, or from standard input with --stdin.",
            discussion: "The text is never taken as an argument: shell history and ps would keep it.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The note's title (one line, at most 100 characters), e.g. \"Pension\".") var title: String
        @OptionGroup var body: BodyOptions
        @OptionGroup var attach: AttachOptions

        func run() throws {
            let title = try CommandContext.name(title, what: "note title")
            let piped = body.stdin ? try body.readStandardInput() : nil
            let ledger = try options.openLedger()
            let attachment = try attach.attachment(in: ledger)
            let today = try CommandContext.today()
            if ledger.notes.contains(where: { $0.title.caseInsensitiveCompare(title) == .orderedSame }) {
                throw CLIError(
                    .invalidInput, "A note called '\(title)' already exists.",
                    hint: "Change it with: coffer note edit \"\(title)\"")
            }
            if let piped {
                guard !piped.isEmpty else {
                    throw CLIError(.invalidInput, "The note's text is empty.", hint: "Nothing was added.")
                }
                try ledger.addNote(title: title, body: piped, attachment: attachment, today: today)
                Output.line("Added note \(title).")
                return Output.advice("Undo with: coffer undo")
            }
            var added: Note?
            let saves = try NoteEditor.edit("", allowDisk: body.allowDisk) { text in
                if var note = added {
                    note.body = text
                    return try ledger.saveNote(note)
                }
                guard !text.isEmpty else { return false }
                added = try ledger.addNote(title: title, body: text, attachment: attachment, today: today)
                return true
            }
            guard added != nil else { return Output.line("The note was empty; nothing was added.") }
            Output.line("Added note \(title) (saved \(saves) time\(saves == 1 ? "" : "s")).")
            Output.advice("Undo with: coffer undo (once per save)")
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a note's text in $EDITOR (or from --stdin), or what it is attached to.",
            discussion:
                "Given only --account, --client, --invoice or --detach, only the attachment changes. In $EDITOR every save is kept as it happens."
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The note (its title, or a unique prefix of at least 3 letters).") var title: String
        @OptionGroup var body: BodyOptions
        @OptionGroup var attach: AttachOptions
        @Flag(help: "Attach the note to nothing.") var detach = false

        func run() throws {
            if detach && attach.given {
                throw CLIError(
                    .invalidInput, "Give --detach or an attachment (--account, --client, --invoice), not both.",
                    hint: "Nothing was changed.")
            }
            let piped = body.stdin ? try body.readStandardInput() : nil
            let ledger = try options.openLedger()
            var note = try ledger.note(named: title)
            if detach { note.attachment = nil }
            if attach.given { note.attachment = try attach.attachment(in: ledger) }
            if let piped { note.body = piped }
            if piped != nil || detach || attach.given {
                let changed = try ledger.saveNote(note)
                Output.line(changed ? "Saved note \(note.title)." : "Note \(note.title) is unchanged.")
                if changed { Output.advice("Undo with: coffer undo") }
                return
            }
            let saves = try NoteEditor.edit(note.body, allowDisk: body.allowDisk) { text in
                note.body = text
                return try ledger.saveNote(note)
            }
            Output.line(
                saves == 0
                    ? "Note \(note.title) is unchanged."
                    : "Saved note \(note.title) (\(saves) time\(saves == 1 ? "" : "s")).")
            if saves > 0 { Output.advice("Undo with: coffer undo (once per save)") }
        }
    }

    /// One note as `show --json` prints it; `list --json` leaves the body out.
    struct JSON: Encodable {
        struct Attached: Encodable { let kind, name: String }
        let title: String
        let body: String?
        @NullEncoded var attachedTo: Attached?
        let created, updated: String
    }

    static func json(_ note: Note, ledger: Ledger, withBody: Bool) -> JSON {
        JSON(
            title: note.title, body: withBody ? note.body : nil,
            attachedTo: ledger.attachmentName(of: note).map { JSON.Attached(kind: $0.kind, name: $0.name) },
            created: note.created.description, updated: updatedText(note))
    }

    /// The time of the last change, UTC, to the second: `2026-11-01T09:30:00Z`.
    static func updatedText(_ note: Note) -> String {
        Date(timeIntervalSince1970: TimeInterval(note.updated)).ISO8601Format()
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a note's text.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "The note (its title, or a unique prefix of at least 3 letters).") var title: String
        @OptionGroup var report: ReportOptions

        func run() throws {
            let ledger = try options.openLedger()
            let note = try ledger.note(named: title)
            if report.json { return try Output.json(NoteCommands.json(note, ledger: ledger, withBody: true)) }
            let attached = ledger.attachmentName(of: note).map { " · \($0.kind) \($0.name)" } ?? ""
            let style = Style.current()
            Output.line(style.bold(note.title) + style.dim("\(attached) · updated \(NoteCommands.updatedText(note))"))
            Output.line()
            Output.line(note.body)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the notes: titles, what each is attached to, when it changed (never the text).")
        @OptionGroup var options: VaultOptions
        @OptionGroup var report: ReportOptions

        func run() throws {
            let ledger = try options.openLedger()
            if report.json {
                return try Output.json([
                    "notes": ledger.notes.map { NoteCommands.json($0, ledger: ledger, withBody: false) }
                ])
            }
            guard !ledger.notes.isEmpty else {
                Output.line("No notes yet.")
                return Output.advice("Next: coffer note add TITLE (the text in $EDITOR, or --stdin)")
            }
            Render.table(
                [["Note", "Attached to", "Updated"]]
                    + ledger.notes.map { note in
                        [
                            note.title, ledger.attachmentName(of: note).map { "\($0.kind) \($0.name)" } ?? "",
                            NoteCommands.updatedText(note),
                        ]
                    }
            ).forEach { Output.line($0) }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Remove a note (undoable).", aliases: ["remove", "delete"])
        @OptionGroup var options: VaultOptions
        @Argument(help: "The note (its title, or a unique prefix of at least 3 letters).") var title: String

        func run() throws {
            let ledger = try options.openLedger()
            let note = try ledger.note(named: title)
            try ledger.removeNote(note)
            Output.line("Removed note \(note.title).")
            Output.advice("Undo with: coffer undo")
        }
    }

    /// The titles of the notes attached to a record, for its screen ("Notes: Pension, Will").
    static func attachedTitles(_ id: UUID, ledger: Ledger) -> [String] { ledger.notes(attachedTo: id).map(\.title) }

    static func printAttached(_ id: UUID, ledger: Ledger) {
        let titles = attachedTitles(id, ledger: ledger)
        guard !titles.isEmpty else { return }
        Output.line("Notes: \(titles.joined(separator: ", ")) (coffer note show TITLE)")
    }
}
