import Loopback

/// An ordered record of what tasks did, shared between them.
actor EventLog<Entry: Sendable & Equatable> {
  private(set) var entries: [Entry] = []

  func append(_ entry: Entry) {
    entries.append(entry)
  }
}
