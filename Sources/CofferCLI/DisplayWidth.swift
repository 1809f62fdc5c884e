/// How many terminal cells text takes, as wcwidth counts them: two for East Asian wide and
/// fullwidth characters and for emoji shown as pictures, none for combining marks and format
/// characters, one otherwise. Counted per grapheme cluster (a flag or a family emoji is one
/// picture, two cells), so CJK names, emoji and accents line up in tables. Coffer's own table
/// rather than the C library's, whose answer depends on the process's locale.
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for character in text {
            // Colour sequences (ESC [ … letter) take no cells.
            if inEscape {
                if character.isLetter { inEscape = false }
                continue
            }
            if character == "\u{1B}" {
                inEscape = true
                continue
            }
            width += of(character)
        }
        return width
    }

    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.isASCII { return first.value < 0x20 || first.value == 0x7F ? 0 : 1 }
        if scalars.contains(where: { $0.value == 0xFE0F }) || first.properties.isEmojiPresentation { return 2 }
        if scalars.count > 1, scalars.contains(where: { $0.value == 0x200D }), first.properties.isEmoji { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        return isWide(first.value) ? 2 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges of Unicode 15 (EastAsianWidth.txt, merged).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F, 0x2693...0x2693, 0x26A1...0x26A1,
        0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA,
        0x26F2...0x26F3, 0x26F5...0x26F5, 0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B,
        0x2728...0x2728, 0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
        0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55, 0x2E80...0x303E,
        0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
        0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
        0x17000...0x18CFF, 0x1AFF0...0x1B2FF, 0x1F004...0x1F004, 0x1F0CF...0x1F0CF, 0x1F18E...0x1F18E,
        0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F260...0x1F265, 0x1F300...0x1F64F, 0x1F680...0x1F6FF,
        0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    private static func isWide(_ value: UInt32) -> Bool {
        var low = 0, high = wideRanges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if value < wideRanges[middle].lowerBound {
                high = middle - 1
            } else if value > wideRanges[middle].upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// The longest prefix of `text` that fits `width` cells, with `…` when something was cut.
    static func truncated(_ text: String, to width: Int) -> String {
        guard of(text) > width else { return text }
        var kept = "", used = 0
        for character in text {
            let cells = of(character)
            guard used + cells <= max(0, width - 1) else { break }
            kept.append(character)
            used += cells
        }
        return kept + "…"
    }

    /// `text` broken at spaces into lines of at most `width` cells; continuation lines start
    /// with the first line's indent. A word longer than a line stays whole (it is never split).
    static func wrapped(_ text: String, to width: Int) -> [String] {
        guard of(text) > width else { return [text] }
        let indent = String(text.prefix { $0 == " " })
        var lines: [String] = []
        var line = indent, lineWidth = of(indent)
        for word in text.dropFirst(indent.count).split(separator: " ", omittingEmptySubsequences: false) {
            let wordWidth = of(String(word))
            if lineWidth > of(indent), lineWidth + 1 + wordWidth > width {
                lines.append(line)
                line = indent + word
                lineWidth = of(indent) + wordWidth
            } else {
                line += (lineWidth > of(indent) ? " " : "") + word
                lineWidth += (lineWidth > of(indent) ? 1 : 0) + wordWidth
            }
        }
        lines.append(line)
        return lines
    }
}
