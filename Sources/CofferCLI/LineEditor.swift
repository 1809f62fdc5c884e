import CEditLine
import FinanceCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `coffer shell`'s prompt at a terminal, through libedit: emacs-style line editing (arrows,
/// Ctrl-A/E/W/U, Ctrl-R search), a history of this shell's lines kept in memory only and dropped
/// when it ends (nothing is written to disk), Tab completing command words and the names in the
/// open vault, and the idle timeout counted while a line is half typed too.
final class LineEditor {
    /// What Tab offers for the line up to the cursor: the words before the one being typed, and
    /// that partial word.
    typealias Completer = (_ before: [String], _ partial: String) -> [String]

    private let editLine: OpaquePointer
    private let history: OpaquePointer
    private let completer: Completer
    private let idle: TimeInterval
    private var deadline = Date.distantFuture
    /// Set when a line ended because the idle time ran out rather than at Ctrl-D.
    private(set) var timedOut = false

    /// libedit's callbacks are C functions without a context argument: they reach the one
    /// editor of the process here.
    nonisolated(unsafe) private static var active: LineEditor?
    nonisolated(unsafe) private static let prompt = strdup("coffer> ")

    /// Nil when libedit cannot start on this terminal; the shell then reads plain lines.
    init?(idle: TimeInterval, completer: @escaping Completer) {
        guard let editLine = coffer_el_init_terminal("coffer"), let history = history_init() else {
            return nil
        }
        self.editLine = editLine
        self.history = history
        self.completer = completer
        self.idle = idle
        coffer_history_set_size(history, 200)
        coffer_el_set_history(editLine, history)
        coffer_el_set_editor(editLine, "emacs")
        coffer_el_set_signal(editLine, 1)
        coffer_el_set_prompt(editLine) { _ in LineEditor.prompt }
        coffer_el_set_read_character(editLine) { _, character in LineEditor.active?.readCharacter(into: character) ?? 0
        }
        coffer_el_add_function(editLine, "coffer-complete", "Complete a command or a name") { editLine, _ in
            guard let editLine, let editor = LineEditor.active else { return UInt8(CC_ERROR) }
            return editor.complete(editLine)
        }
        coffer_el_bind(editLine, "^I", "coffer-complete")
        Self.active = self
    }

    deinit {
        Self.active = nil
        el_end(editLine)
        history_end(history)  // the lines typed go with it: nothing was ever written out
    }

    /// The next line without its newline; nil at Ctrl-D or when the idle time ran out.
    func readLine() -> String? {
        deadline = Date().addingTimeInterval(idle)
        var count: Int32 = 0
        guard let line = el_gets(editLine, &count), count > 0 else { return nil }
        var text = String(cString: line)
        if text.hasSuffix("\n") { text.removeLast() }
        if !text.trimmingCharacters(in: .whitespaces).isEmpty { coffer_history_enter(history, text) }
        return text
    }

    /// libedit's read-a-character hook: waits for input until the idle deadline (0, end of
    /// input, when it passes), then decodes one UTF-8 character from standard input.
    private func readCharacter(into character: UnsafeMutablePointer<wchar_t>?) -> Int32 {
        var first: UInt8 = 0
        guard waitForInput(), readByte(&first) else { return 0 }
        var value = UInt32(first)
        let continuation = first < 0x80 ? 0 : first >= 0xF0 ? 3 : first >= 0xE0 ? 2 : first >= 0xC0 ? 1 : 0
        if continuation > 0 {
            value = UInt32(first) & (0x3F >> UInt32(continuation))
            for _ in 0..<continuation {
                var next: UInt8 = 0
                guard readByte(&next), next & 0xC0 == 0x80 else { return -1 }
                value = value << 6 | UInt32(next & 0x3F)
            }
        }
        character?.pointee = wchar_t(bitPattern: value)
        return 1
    }

    private func waitForInput() -> Bool {
        let remaining = deadline.timeIntervalSinceNow
        guard remaining > 0, CommandSession.inputArrives(within: remaining) else {
            timedOut = true
            return false
        }
        return true
    }

    private func readByte(_ byte: inout UInt8) -> Bool {
        while true {
            let count = Glibc.read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            return count == 1
        }
    }

    /// Tab: one candidate is written out in full (quoted when it has spaces) with a space after
    /// it; several extend the word to what they share, else are listed under the line.
    private func complete(_ editLine: OpaquePointer) -> UInt8 {
        guard let info = el_line(editLine)?.pointee, let buffer = info.buffer, let cursor = info.cursor else {
            return UInt8(CC_ERROR)
        }
        let typed = String(
            decoding: UnsafeRawBufferPointer(start: buffer, count: cursor - buffer).bindMemory(to: UInt8.self),
            as: UTF8.self)
        let (before, partial, quoted) = Self.split(typed)
        let candidates = completer(before, partial).filter {
            $0.lowercased().hasPrefix(partial.lowercased())
        }
        guard !candidates.isEmpty else {
            el_beep(editLine)
            return UInt8(CC_REFRESH)
        }
        if candidates.count == 1 {
            let choice = candidates[0]
            let needsQuotes = quoted || choice.contains(" ")
            el_deletestr(editLine, Int32(partial.utf8.count + (quoted ? 1 : 0)))
            el_insertstr(editLine, (needsQuotes ? "\"\(choice)\"" : choice) + " ")
            return UInt8(CC_REFRESH)
        }
        let shared = Self.sharedPrefix(candidates)
        if shared.count > partial.count, !shared.contains(" ") || quoted {
            el_deletestr(editLine, Int32(partial.utf8.count))
            el_insertstr(editLine, shared)
            return UInt8(CC_REFRESH)
        }
        let list = candidates.sorted().map { $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: "  ")
        Terminal.writeError("\n" + TextSafety.printable(list) + "\n")
        return UInt8(CC_REDISPLAY)
    }

    /// The words before the cursor's word, that word, and whether it opened a double quote.
    static func split(_ typed: String) -> (before: [String], partial: String, quoted: Bool) {
        var words: [String] = []
        var word = ""
        var inQuotes = false
        for character in typed {
            if character == "\"" {
                inQuotes.toggle()
            } else if character == " ", !inQuotes {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(character)
            }
        }
        return (words, word, inQuotes)
    }

    static func sharedPrefix(_ words: [String]) -> String {
        guard var prefix = words.first else { return "" }
        for word in words.dropFirst() {
            while !word.lowercased().hasPrefix(prefix.lowercased()) { prefix.removeLast() }
        }
        return prefix
    }
}
