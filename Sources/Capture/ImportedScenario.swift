import Foundation
import GATT

/// The files that replay a peripheral with Doppel's `generic` model, from a
/// capture (`doppel import`) or a live recording (`doppel record`): a
/// scenario, the profile it names, the recording of the peripheral's
/// notifications and indications, and (from a capture) the central's writes
/// with their answers. Times count from the session's first subscription
/// (from the connection itself when the central never subscribed), and the
/// disconnection is a timeline fault at the same moment from there.
public struct ImportedScenario: Sendable {
  /// File names inside the output folder, and their text.
  public var files: [(name: String, text: String)]
  /// What could not be carried over exactly, one sentence each.
  public var notes: [String]
  /// One line per figure: notifications, writes, the disconnection.
  public var summary: [String]

  public static let scenarioFile = "scenario.yaml"
  public static let profileFile = "profile.yaml"
  public static let recordingFile = "notifications.csv"
  public static let writesFile = "writes.csv"

  /// How long a replay goes on after the session's last event, in µs: time
  /// for a central to come back after a replayed drop (over BlueZ the link
  /// goes down 2 s after the device asks, and a central takes seconds to
  /// find and connect again).
  static let afterSession: Int64 = 20_000_000
  /// How long the scenario gives a central to find the device, in µs.
  static let toFind: Int64 = 60_000_000
  /// At most this many `central-wrote` expectations, one per distinct write.
  static let writeExpectations = 20

  /// - Parameters:
  ///   - connection: which of the peripheral's connections (by index); by
  ///     default the first with notifications or indications, else the first with ATT traffic.
  ///   - source: the capture's name, for the scenario's description.
  public init(peripheral: CapturedPeripheral, connection chosen: Int? = nil, source: String) throws(CaptureError) {
    let candidates = peripheral.connections.indices
    let index =
      chosen
      ?? candidates.first { i in
        peripheral.connections[i].events.contains {
          if case .notification = $0.event { return true }
          if case .indication = $0.event { return true }
          return false
        }
      } ?? candidates.first { peripheral.connections[$0].attPDUs > 0 }
    guard let index, peripheral.connections.indices.contains(index), peripheral.connections[index].attPDUs > 0 else {
      throw CaptureError(.noATTTraffic, "the capture has no ATT traffic with \(peripheral.address)")
    }
    var connection = peripheral.connections[index]
    var notes: [String] = []
    if let (record, offset, kept) = connection.firstCutATT {
      if let encrypted = connection.encryptedAt {
        throw CaptureError(
          .encryptedLink,
          "the link to \(peripheral.address) was encrypted from record \(encrypted.record) (byte offset"
            + " \(encrypted.offset)) and the capture keeps only the first \(kept) bytes of its ATT packets, as a"
            + " filtered snoop log does: the peripheral's values, notifications and writes cannot be read",
          record: record, offset: offset)
      }
      throw CaptureError(
        .truncated,
        "the capture keeps only \(kept) bytes of this ATT packet to \(peripheral.address) (a snapshot length"
          + " or a filtered snoop log): its values cannot be read",
        record: record, offset: offset)
    }
    var database = connection.database
    if database.services.isEmpty {
      // The central had the database cached: the nearest discovery before it, else the first after it.
      let discovered = peripheral.connections.indices.filter { !peripheral.connections[$0].database.services.isEmpty }
      if let other = discovered.last(where: { $0 < index }) ?? discovered.first {
        database = peripheral.connections[other].database
        notes.append(
          "connection \(index + 1) shows no discovery; the profile comes from connection \(other + 1)'s")
      }
    }
    // With a database from elsewhere, CCCD writes show only now.
    connection.events = connection.events.map { time, event in
      guard case .write(let handle, let value, _, _) = event, value.count == 2, database.isCCCD(handle) else {
        return (time, event)
      }
      return (time, .subscription(handle: handle - 1, value: UInt16(value[0]) | UInt16(value[1]) << 8))
    }
    let profile = ImportedProfile(database: database, connection: connection, notes: &notes)
    // What the central's stack did in bluetoothd's GAP and GATT services
    // (subscribing to Service Changed, Client Supported Features) the
    // replaying central's stack does by itself; it is no part of the device's
    // session, and would move its first subscription.
    let stackEvents = connection.events.filter { profile.isStackHandle($0.event.handle) }
    if !stackEvents.isEmpty {
      connection.events.removeAll { profile.isStackHandle($0.event.handle) }
      // The handles written: a subscription is kept at the handle before its CCCD.
      let written = stackEvents.map { entry in
        if case .subscription(let handle, _) = entry.event { handle + 1 } else { entry.event.handle }
      }
      let handles = Set(written).sorted().map { "0x" + hex16($0) }
      notes.append(
        "\(stackEvents.count) ATT exchange\(stackEvents.count == 1 ? "" : "s") in the GAP and GATT services"
          + " (handle\(handles.count == 1 ? "" : "s") \(handles.joined(separator: ", "))) are left out: the central's"
          + " Bluetooth stack made them (Service Changed, Client Supported Features), and a replaying central's makes"
          + " them by itself")
    }

    // Every time within a million seconds of the connection, so no difference below can overflow.
    let times = connection.events.map(\.time) + (connection.disconnection.map { [$0.time] } ?? [])
    if let wild = times.first(where: { !Self.near($0, connection.connectedAt) }) {
      throw CaptureError(
        .badTimestamp,
        "the session with \(peripheral.address) has a timestamp (\(wild) µs) more than \(Self.longestSession / 1_000_000)"
          + " s from its connection's (\(connection.connectedAt) µs): its times are not one session's")
    }
    let events = connection.events.map { time, event -> (time: Int64, event: PeripheralSession.Event) in
      switch event {
      case .notification(let handle, let value): (time, .notification(key: profile.key(handle), value: value))
      case .indication(let handle, let value): (time, .indication(key: profile.key(handle), value: value))
      case .write(let handle, let value, let withResponse, let answer):
        (time, .write(key: profile.key(handle), value: value, withResponse: withResponse, answer: answer))
      case .subscription(let handle, let value): (time, .subscription(key: profile.key(handle), value: value))
      }
    }
    if connection.disconnection == nil {
      notes.append("the capture ends before the link does: the scenario has no disconnection")
    }
    let session = PeripheralSession(
      origin: [
        "Imported by `doppel import` from \(source):",
        "the peripheral \(peripheral.address), connection \(index + 1) of \(peripheral.connections.count),"
          + " seen from the \(connection.seenFromCentral ? "central" : "peripheral")'s side.",
      ],
      name: "imported \(peripheral.advertisement.localName ?? peripheral.address.description)",
      description: "\(peripheral.address) from \(source)",
      advertisement: peripheral.advertisement(at: connection.connectedAt), profile: profile,
      connectedAt: connection.connectedAt, events: events,
      disconnection: connection.disconnection.map { ($0.time, DisconnectionReason.describe($0.reason)) },
      watchedUntil: nil, seesWrites: true)
    self.init(session: session, notes: notes)
  }

  /// The files that replay `session`; `notes` are those its reading made so far.
  init(session: PeripheralSession, notes: [String]) {
    var notes = notes
    let profile = session.profile
    // Times from the first subscription (or the connection).
    let firstSubscription = session.events.first {
      if case .subscription(_, let value) = $0.event { return value != 0 }
      return false
    }
    let anchor = firstSubscription?.time ?? session.connectedAt
    let anchorName = firstSubscription == nil ? "connected" : "subscribed"
    func offset(_ time: Int64) -> Int64 { max(0, time - anchor) }

    var recording = "time,characteristic,value\n"
    var notified = 0
    var early = 0
    var writes = "time,characteristic,value,type,answer\n"
    var writeCount = 0
    var refusals: [(key: String, value: [UInt8], code: UInt8)] = []
    var distinctWrites: [(key: String, value: [UInt8])] = []
    var subscribed: [String] = []
    for (time, event) in session.events {
      switch event {
      case .notification(let key, let value), .indication(let key, let value):
        if time < anchor { early += 1 }
        recording += "\(Self.seconds(offset(time))),\(key),\(Self.hex(value))\n"
        notified += 1
      case .write(let key, let value, let withResponse, let answer):
        let outcome =
          switch answer {
          case nil: withResponse ? "unanswered" : "none"
          case 0: "accepted"
          case let code?: "error 0x" + String(format2: code)
          }
        writes +=
          "\(Self.signedSeconds(time - anchor)),\(key),\(Self.hex(value)),"
          + "\(withResponse ? "request" : "command"),\(outcome)\n"
        writeCount += 1
        if let code = answer, code != 0, !refusals.contains(where: { $0.key == key && $0.value == value }) {
          refusals.append((key, value, code))
        }
        if !distinctWrites.contains(where: { $0.key == key && $0.value == value }) {
          distinctWrites.append((key, value))
        }
      case .subscription(let key, let value):
        if value != 0, !subscribed.contains(key) { subscribed.append(key) }
      }
    }
    if early > 0 {
      notes.append(
        "\(early) notification\(early == 1 ? "" : "s") came before the first subscription; they are replayed at its moment"
      )
    }
    if writeCount > 0, distinctWrites.count > Self.writeExpectations {
      notes.append(
        "the central wrote \(distinctWrites.count) distinct values; the scenario expects the first"
          + " \(Self.writeExpectations) (every write is in \(Self.writesFile))")
    }

    // The profile file.
    var profileText = profile.yaml(advertisement: Self.fitting(session.advertisement, notes: &notes))
    profileText += "replay:\n  - {file: \(Self.recordingFile), from: \(anchorName)}\n"
    if !refusals.isEmpty {
      profileText += "responses:\n"
      for refusal in refusals {
        profileText +=
          "  - {characteristic: \(refusal.key), value: \"\(Self.hex(refusal.value))\", error: \"0x\(String(format2: refusal.code))\"}\n"
      }
    }

    // The scenario.
    let lastEvent = session.events.last.map { offset($0.time) } ?? 0
    var scenario = session.origin.map { "# \($0)\n" }.joined()
    scenario += "# Times count from the \(firstSubscription == nil ? "connection" : "first subscription").\n"
    var summary = [
      "\(notified) notification\(notified == 1 ? "" : "s") and indication\(notified == 1 ? "" : "s") → \(Self.recordingFile)"
    ]
    if session.seesWrites {
      summary.append(
        "\(writeCount) write\(writeCount == 1 ? "" : "s") (\(refusals.count) refused) → \(Self.writesFile)")
    }
    var end = max(lastEvent, session.watchedUntil.map(offset) ?? 0)
    var timeline = "timeline:\n"
    if let (time, reason) = session.disconnection {
      let at = offset(time)
      end = max(end, at)
      scenario += "# The link ended \(Self.seconds(at)) s after that, reason \(reason).\n"
      timeline += "  - {after: \(anchorName), delay: \(at)us, do: disconnect}\n"
      summary.append(
        "disconnection \(Self.seconds(at)) s after the \(anchorName == "subscribed" ? "first subscription" : "connection"), reason \(reason) → a timeline fault"
      )
    }
    scenario += "scenario: \(session.name)\n"
    scenario += "description: \(Self.quoted(session.description))\n"
    // The run ends 20 s after the session did; its duration is only a bound,
    // with a minute for the central to start and find the device (a Python
    // central in the lab's emulated machine takes seconds to import bleak).
    timeline += "  - {after: \(anchorName), delay: \(end + Self.afterSession)us, do: end}\n"
    scenario += "duration: \((anchor - session.connectedAt + end + Self.afterSession + Self.toFind) / 1000)ms\n"
    scenario += "devices:\n  - id: device\n    model: generic\n    profile: \(Self.profileFile)\n"
    // Doppel's own client writes what the captured central wrote; another central under `doppel test` ignores it.
    scenario += "    client: {reconnect: false\(writeCount > 0 ? ", writes: \(Self.writesFile)" : "")}\n"
    scenario += timeline
    var expectations: [String] = []
    for key in subscribed { expectations.append("  - central-subscribed: \(key)") }
    for write in distinctWrites.prefix(Self.writeExpectations) {
      expectations.append("  - central-wrote: {characteristic: \(write.key), hex: \"^\(Self.hex(write.value))$\"}")
    }
    if !expectations.isEmpty { scenario += "expect:\n" + expectations.joined(separator: "\n") + "\n" }
    files = [(Self.scenarioFile, scenario), (Self.profileFile, profileText), (Self.recordingFile, recording)]
    if session.seesWrites { files.append((Self.writesFile, writes)) }
    self.notes = notes
    self.summary = summary
  }

  /// Writes the files into `folder`, made if it is not there.
  public func write(into folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (name, text) in files {
      try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
    }
  }

  /// `advertisement`, less what does not fit a legacy advertisement and its
  /// scan response (extended advertising can carry more than BlueZ hosts in
  /// legacy PDUs): service UUIDs from the last, then service data, then
  /// manufacturer data; each drop is noted.
  static func fitting(_ advertisement: AdvertisementData, notes: inout [String]) -> AdvertisementData {
    var data = advertisement
    var dropped: [String] = []
    while (try? data.legacyLayout()) == nil {
      if data.serviceUUIDs.count > 0 {
        dropped.append("service UUID \(ImportedProfile.uuid(data.serviceUUIDs.removeLast()))")
      } else if let uuid = data.serviceData.keys.max() {
        data.serviceData[uuid] = nil
        dropped.append("service data of \(ImportedProfile.uuid(uuid))")
      } else if let company = data.manufacturerData.keys.max() {
        data.manufacturerData[company] = nil
        dropped.append("manufacturer data of company \(company)")
      } else {
        break
      }
    }
    if !dropped.isEmpty {
      notes.append(
        "the advertising data does not fit a legacy advertisement and scan response; left out: "
          + dropped.joined(separator: ", "))
    }
    return data
  }

  /// The longest session imported, in microseconds (about 11.5 days).
  static let longestSession: Int64 = 1_000_000_000_000

  /// Whether `time` is within `longestSession` of `reference`, without overflowing.
  static func near(_ time: Int64, _ reference: Int64) -> Bool {
    let (difference, overflow) = time.subtractingReportingOverflow(reference)
    return !overflow && difference.magnitude <= UInt64(longestSession)
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// Microseconds as seconds with six decimals.
  static func seconds(_ microseconds: Int64) -> String {
    let fraction = String(microseconds % 1_000_000)
    return "\(microseconds / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
  }

  static func signedSeconds(_ microseconds: Int64) -> String {
    microseconds < 0 ? "-" + seconds(-microseconds) : seconds(microseconds)
  }

  static func quoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }
}
