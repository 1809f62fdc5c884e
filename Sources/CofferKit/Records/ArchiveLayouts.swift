import VaultBackup

/// How archives lay out the payloads that come in numbers (Specs/backup-format.md, "Layouts"):
/// each kind's current fields in the layout language (sequence numbers and times as `n` and
/// `d`, which store the difference from the record before), so that an archive stores
/// dates, amounts and names in columns. A payload the layout does not fit (another version)
/// is stored whole, so a layout can only cost compression, never a record. Keyed by
/// `kind << 8 | version`; a new payload version needs its own entry here.
enum ArchiveLayouts {
    static let all: [UInt16: ColumnLayout] = Dictionary(
        uniqueKeysWithValues: [
            // Amount, type, target (category, source, goal: an id; uncategorised: none), note,
            // date, sequence, statement origin (account, row digest), flow (from, to, order).
            (RecordKind.transaction, 3, "sb<i|i|i|>?tdn?(tt)?(?i?in)"),
            // Account, date, amount, sequence, note.
            (.update, 2, "idsn?t"),
            // Sequence, time, summary, then each record touched and its payload before.
            (.change, 1, "ndt[i?t]"),
            // Number, client, items (description, quantity, price, line kind, share), tax,
            // issued, due, notes, status, sent, voided, payments (date, amount, flow),
            // reference, reminders.
            (.invoice, 3, "ni[tssb?s]?sdd?tb?d?d[ds?(?i?in)]t[d]"),
            // Name, category, kind, growth rate, created, closed.
            (.account, 1, "ttb?sd?d"),
        ].map { kind, version, text in (UInt16(kind.rawValue) << 8 | UInt16(version), try! ColumnLayout(text)) })
}
