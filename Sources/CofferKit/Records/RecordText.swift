import FinanceCore

extension FinanceRecord {
    /// Refuses a record with a control character in any of its text fields, naming the field.
    public func checkText() throws {
        for (field, text) in textFields { try TextSafety.check(field: field, text: text) }
    }

    /// Every text field of a record, by field name. A test walks each record kind by reflection
    /// and fails when a text field is missing here, so a field added later cannot slip past.
    public var textFields: [(field: String, text: String)] {
        switch self {
        case .settings(let settings): [("currency", settings.currency.code), ("currency", settings.currency.symbol)]
        case .account(let account): [("name", account.name), ("category", account.category)]
        case .update(let update): update.note.map { [("note", $0)] } ?? []
        case .categoryRate(let rate): [("category", rate.category)]
        case .change(let change): [("summary", change.summary)]
        case .undoneChange(let undone): [("summary", undone.change.summary)]
        case .importProfile(let profile):
            [("name", profile.name)]
                + [
                    profile.account, profile.ruleSet, profile.dateColumn, profile.amountColumn, profile.debitColumn,
                    profile.creditColumn, profile.descriptionColumn, profile.payeeColumn, profile.balanceColumn,
                    profile.dateFormat, profile.delimiter, profile.currency,
                ].compactMap { $0.map { ("setting", $0) } }
                + (profile.hledgerRules.map { [("rules file", $0)] } ?? [])
        case .note(let note): [("title", note.title), ("note body", note.body)]
        case .recurring(let item): [("name", item.name)] + (item.note.map { [("note", $0)] } ?? [])
        case .backupTarget(let target): [("path", target.path)]
        case .backupState(let state): state.verified.map { ("path", $0.path) }
        case .budgetCategory(let category): [("name", category.name)]
        case .incomeSource(let source): [("name", source.name)]
        case .transaction(let transaction):
            (transaction.note.map { [("note", $0)] } ?? [])
                + (transaction.origin.map { [("account", $0.account)] } ?? [])
        case .savingsGoal(let goal): [("name", goal.name)]
        case .client(let client):
            [("name", client.name)] + (client.email.map { [("email", $0)] } ?? [])
                + (client.address.map { [("address", $0)] } ?? [])
        case .invoice(let invoice):
            invoice.items.map { ("description", $0.description) } + (invoice.notes.map { [("notes", $0)] } ?? [])
                + [("reference", invoice.reference)]
        case .invoiceSender(let sender):
            [
                ("name", sender.name), ("address", sender.address), ("email", sender.email),
                ("tax number", sender.taxNumber), ("payment instructions", sender.paymentInstructions),
                ("bank details", sender.bankDetails), ("number format", sender.numberFormat.pattern),
            ].compactMap { field, text in text.map { (field, $0) } }
        case .invoiceCounter, .syncIndex, .syncConflict, .summary: []
        case .syncState(let state):
            [("device name", state.deviceName), ("folder", state.folder)]
                + state.devices.values.map { ("device name", $0.name) }
        case .categoryRuleSet(let set): [("name", set.name)] + set.rules.map { ("pattern", $0.pattern) }
        }
    }
}
