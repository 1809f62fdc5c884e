import FinanceCore

func date(_ text: String) -> CalendarDate { try! CalendarDate(parsing: text) }
