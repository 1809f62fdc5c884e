import Foundation

/// A rough, offline estimate of how guessable a new passphrase is. Anyone holding a copy of the
/// vault (a synced folder, a backup) can try passphrases at Argon2id's pace, so a short or
/// patterned one is refused unless the user insists (`--allow-weak-passphrase`).
///
/// Not zxcvbn: it counts characters from the classes used, after collapsing repeats, keyboard and
/// alphabet runs, and refuses the few passphrases every cracking list starts with.
enum PassphraseStrength {
    static let minimumLength = 10
    /// About 2^40 guesses: decades at Argon2id's "moderate" cost on one machine.
    static let minimumBits = 40.0

    static let common: Set<String> = [
        "password", "passw0rd", "password1", "password123", "123456789", "1234567890", "qwertyuiop", "qwerty123",
        "iloveyou", "letmein123", "welcome123", "admin12345", "changeme", "correcthorsebatterystaple", "trustno1",
        "football", "baseball", "sunshine", "princess", "dragon", "monkey", "superman", "starwars", "whatever",
    ]

    /// Why `text` is weak, or nil when it is not.
    static func weakness(of text: String) -> String? {
        let characters = Array(text)
        guard characters.count >= minimumLength else {
            return
                "it has \(characters.count) character\(characters.count == 1 ? "" : "s"); at least \(minimumLength) are needed"
        }
        let folded = text.lowercased().filter { !$0.isWhitespace }
        if common.contains(folded) || common.contains(where: { folded.hasPrefix($0) && folded.count - $0.count <= 4 }) {
            return "it is one of the first passphrases any guessing program tries"
        }
        if estimatedBits(characters) < minimumBits {
            return "it repeats or follows a simple pattern, so it is quick to guess"
        }
        return nil
    }

    /// log2(pool) per character that does not repeat or continue a run of its neighbours.
    static func estimatedBits(_ characters: [Character]) -> Double {
        var pool = 0
        if characters.contains(where: { $0.isLowercase }) { pool += 26 }
        if characters.contains(where: { $0.isUppercase }) { pool += 26 }
        if characters.contains(where: { $0.isNumber }) { pool += 10 }
        if characters.contains(where: { $0.isWhitespace }) { pool += 1 }
        if characters.contains(where: { $0.isASCII && ($0.isPunctuation || $0.isSymbol) }) { pool += 33 }
        if characters.contains(where: { !$0.isASCII }) { pool += 100 }
        let perCharacter = log2(Double(max(pool, 2)))
        var bits = 0.0
        for (index, character) in characters.enumerated() {
            guard index > 0 else { bits += perCharacter; continue }
            let previous = characters[index - 1]
            if character == previous {
                continue  // "aaaa"
            }
            if let a = previous.unicodeScalars.first?.value, let b = character.unicodeScalars.first?.value,
                a.distance(to: b) == 1 || b.distance(to: a) == 1
            {
                bits += 1  // "abcd", "4321"
                continue
            }
            bits += perCharacter
        }
        return bits
    }
}
