import FinanceCore
import Foundation

/// The notes vault: private free text kept beside the finances, optionally attached to an
/// account, a client or an invoice. Every add, save, attach and removal is one undoable change;
/// change summaries name the title, never the body.
extension Ledger {
    /// A note body's limit in UTF-8 bytes: room for a long letter, small enough that every
    /// record stays quick to decode and a slip (a binary piped in) is caught.
    public static let noteBodyLimit = 64 * 1024

    /// Exact title, or a unique prefix of at least 3 letters.
    public func note(named title: String) throws -> Note {
        try Self.match(title, among: notes, name: \.title, kind: "note", minimumPrefix: 3)
    }

    /// The notes attached to one account, client or invoice, by title.
    public func notes(attachedTo id: UUID) -> [Note] { notes.filter { $0.attachment?.id == id } }

    /// Adds a note, created on `today` (the CLI's day, which tests set); titles are unique,
    /// case-insensitively.
    @discardableResult
    public func addNote(
        title: String, body: String, attachment: Note.Attachment?, today: CalendarDate, now: Date = Date()
    ) throws -> Note {
        let title = try Account.validatedName(title, what: "note title")
        try Self.requireUnique(title, among: notes, name: \.title, kind: "note")
        try Self.checkNoteBody(body)
        let note = Note(
            title: title, body: body, attachment: attachment, created: today,
            updated: Int64(now.timeIntervalSince1970))
        try commit("Added note \(title)", puts: [(note.id, .note(note))], now: now)
        return note
    }

    /// Saves a changed note (body, title or attachment) as one change, stamped `now`; a note
    /// that is the same as stored is left alone (an editor saving unchanged text writes nothing).
    /// Returns whether anything was written.
    @discardableResult
    public func saveNote(_ note: Note, now: Date = Date()) throws -> Bool {
        var note = note
        note.title = try Account.validatedName(note.title, what: "note title")
        try Self.requireUnique(note.title, among: notes.filter { $0.id != note.id }, name: \.title, kind: "note")
        try Self.checkNoteBody(note.body)
        guard let stored = notes.first(where: { $0.id == note.id }) else {
            throw CofferError(.noMatch, "The note '\(note.title)' is no longer in the vault.", kind: "note")
        }
        note.updated = stored.updated
        guard note != stored else { return false }
        note.updated = Int64(now.timeIntervalSince1970)
        try commit("Edited note \(note.title)", puts: [(note.id, .note(note))], now: now)
        return true
    }

    public func removeNote(_ note: Note) throws {
        try commit("Removed note \(note.title)", deletes: [note.id])
    }

    /// What a note is attached to, for the screen: ("account", "Pension"), or nil when it is
    /// attached to nothing or to a record since removed.
    public func attachmentName(of note: Note) -> (kind: String, name: String)? {
        guard let attachment = note.attachment else { return nil }
        let name: String? =
            switch attachment.kind {
            case .account: accounts.first { $0.id == attachment.id }?.name
            case .client: clients.first { $0.id == attachment.id }?.name
            case .invoice: invoices.first { $0.id == attachment.id }?.reference
            }
        return name.map { (attachment.kind.rawValue, $0) }
    }

    static func checkNoteBody(_ body: String) throws {
        guard body.utf8.count <= noteBodyLimit else {
            throw CofferError(
                .invalidInput,
                "A note holds at most \(noteBodyLimit / 1024) KiB of text; this one has \(body.utf8.count) bytes. Nothing was changed."
            )
        }
        try TextSafety.check(field: "note body", text: body)
    }
}
