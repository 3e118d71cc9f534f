import Signals

/// A seeded, coverage-blind mutator: from a corpus of valid inputs it makes
/// inputs that are almost valid — the kind that reach deep into a parser —
/// by flipping bits, replacing, inserting, deleting and duplicating bytes,
/// splicing two inputs, and dropping in values that parsers get wrong
/// (0, 0xFF, huge numbers, separators, invalid UTF-8).
public struct Mutator: Sendable {
  private var random: SplitMix64
  private let corpus: [[UInt8]]

  static let tokens: [[UInt8]] = [
    [0], [0xFF], [0x7F], [0x80], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0x0A], [0x0D, 0x0A], [0x09],
    Array("-1".utf8), Array("1e999".utf8), Array("NaN".utf8), Array("0x".utf8), Array(":".utf8), Array("{".utf8),
    Array("}".utf8), Array("[".utf8), Array(",".utf8), Array("\"".utf8), Array("*".utf8), Array("&".utf8),
    Array(String(repeating: "9", count: 400).utf8), Array(" ".utf8), Array("e".utf8), Array("\n\n".utf8),
  ]

  public init(corpus: [[UInt8]], seed: UInt64) {
    self.corpus = corpus.isEmpty ? [[]] : corpus
    random = SplitMix64(seed: seed)
  }

  private mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(random.next() % UInt64(bound)) }

  /// The next input: a corpus entry with one to eight mutations.
  public mutating func next() -> [UInt8] {
    var bytes = corpus[below(corpus.count)]
    for _ in 0...below(8) { mutate(&bytes) }
    if bytes.count > 1 << 16 { bytes.removeLast(bytes.count - (1 << 16)) }
    return bytes
  }

  private mutating func mutate(_ bytes: inout [UInt8]) {
    let position = below(bytes.count + 1)
    switch below(8) {
    case 0 where !bytes.isEmpty:
      bytes[below(bytes.count)] ^= UInt8(1 << below(8))
    case 1 where !bytes.isEmpty:
      bytes[below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
    case 2:
      bytes.insert(contentsOf: (0...below(4)).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
    case 3 where !bytes.isEmpty:
      let start = below(bytes.count)
      bytes.removeSubrange(start..<min(bytes.count, start + 1 + below(16)))
    case 4 where !bytes.isEmpty:
      let start = below(bytes.count)
      let piece = bytes[start..<min(bytes.count, start + 1 + below(32))]
      bytes.insert(contentsOf: piece, at: position)
    case 5:
      let other = corpus[below(corpus.count)]
      let cut = below(other.count + 1)
      bytes = Array(bytes.prefix(position)) + other.suffix(from: cut)
    case 6:
      bytes.insert(contentsOf: Self.tokens[below(Self.tokens.count)], at: position)
    default:
      if !bytes.isEmpty { bytes.removeLast(below(min(bytes.count, 8)) + 1) }
    }
  }
}
