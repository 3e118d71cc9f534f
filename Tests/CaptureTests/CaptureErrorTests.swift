import Capture
import Testing

/// Bad captures get an error that says what is wrong and names the record
/// and its byte offset: truncated files, lengths that lie, fragments that
/// never complete, datalinks this reader does not decode, encrypted links
/// whose packets the capture cut.
struct CaptureErrorTests {
  func error(_ bytes: [UInt8]) -> CaptureError? {
    do {
      _ = try Capture(bytes: bytes)
      return nil
    } catch {
      return error
    }
  }

  func session() -> CaptureFixture {
    var capture = CaptureFixture(.monitor)
    CaptureSession.write(into: &capture)
    return capture
  }

  @Test func aFileCutInsideARecordNamesThatRecord() throws {
    let capture = session()
    let last = capture.offsets.count
    let cut = error(Array(capture.bytes.dropLast(3)))
    #expect(cut?.kind == .truncated)
    #expect(cut?.record == last)
    #expect(cut?.offset == capture.offsets[last - 1])
    #expect(
      cut?.description.hasPrefix(
        "record \(last) (byte offset \(capture.offsets[last - 1])): the file ends inside this record") == true)
    let header = error(Array(capture.bytes.prefix(capture.offsets[2] + 10)))
    #expect(header?.kind == .truncated)
    #expect(header?.record == 3)
    #expect(header?.message == "the file ends inside this record's header (10 of 24 bytes)")
    #expect(error(Array(capture.bytes.prefix(12)))?.kind == .truncated)
  }

  @Test func whatIsNotABTSnoopFileOrNotADatalinkItReads() {
    #expect(error(Array("pcap file, not btsnoop".utf8))?.kind == .notBTSnoop)
    #expect(error(CaptureFixture(.monitor, version: 2).bytes)?.message == "btsnoop version 2 is not version 1")
    let unknown = error(CaptureFixture(.monitor, rawDatalink: 1001).bytes)
    #expect(unknown?.kind == .unknownDatalink)
    #expect(unknown?.message.hasPrefix("datalink 1001 (HCI without framing) is not one this reader decodes") == true)
  }

  @Test func lengthsThatLie() {
    var included = CaptureFixture(.monitor)
    included.record([1, 2, 3], flags: 3, original: 2, included: 3)
    #expect(
      error(included.bytes)?.description
        == "record 1 (byte offset 16): the included length (3) is longer than the original length (2)")
    var huge = CaptureFixture(.monitor)
    huge.record([], flags: 5, original: 0x7FFF_FFFF, included: 0x7FFF_FFFF)
    #expect(error(huge.bytes)?.message == "the included length (2147483647) is longer than any HCI packet")
    var acl = CaptureFixture(.monitor)
    acl.packet(.aclReceived, CaptureFixture.le16(0x2040) + CaptureFixture.le16(50) + [1, 2, 3])
    #expect(
      error(acl.bytes)?.description
        == "record 1 (byte offset 16): the ACL packet says it has 50 bytes but the record holds 3")
    var event = CaptureFixture(.h4)
    event.packet(.event, [0x05, 4, 0x00, 0x40])
    #expect(error(event.bytes)?.message == "the event 0x5 says it has 4 bytes but the record holds 2")
    var l2cap = CaptureFixture(.monitor)
    l2cap.acl(0x40, CaptureFixture.le16(2) + CaptureFixture.le16(4) + [0x1B], received: true)
    l2cap.acl(0x40, [0x12, 0x00, 0x05], received: true, boundary: 1)
    #expect(
      error(l2cap.bytes)?.description
        == "record 2 (byte offset \(l2cap.offsets[1])): the L2CAP frame on handle 0x0040 says it has 2 bytes but"
        + " its fragments hold 4")
  }

  @Test func fragmentsThatNeverComplete() {
    var orphan = CaptureFixture(.monitor)
    orphan.acl(0x40, [1, 2, 3], received: true, boundary: 1)
    #expect(
      error(orphan.bytes)?.message == "an ACL continuation fragment on handle 0x0040 continues no L2CAP frame")
    var restarted = CaptureFixture(.monitor)
    restarted.acl(0x40, CaptureFixture.le16(10) + CaptureFixture.le16(4) + [0x1B, 0x12], received: true)
    restarted.acl(0x40, CaptureFixture.le16(3) + CaptureFixture.le16(4) + [0x1B, 0x12, 0x00], received: true)
    let first = error(restarted.bytes)
    #expect(first?.kind == .incompleteFragments)
    #expect(
      first?.description
        == "record 1 (byte offset 16): the L2CAP frame on handle 0x0040 that starts here never completes: 2 of its"
        + " 10 bytes came before a new frame starts in record 2")
    var dropped = CaptureFixture(.monitor)
    dropped.acl(0x40, CaptureFixture.le16(10) + CaptureFixture.le16(4) + [0x1B], received: true)
    dropped.disconnected(0x40, reason: 0x08)
    #expect(error(dropped.bytes)?.message.hasSuffix("came before its link ended in record 2") == true)
    var ended = CaptureFixture(.h4)
    ended.acl(0x40, CaptureFixture.le16(10) + CaptureFixture.le16(4) + [0x1B], received: true)
    #expect(error(ended.bytes)?.message.hasSuffix("1 of its 10 bytes came before the capture ends") == true)
  }

  @Test func anEncryptedLinkWhosePacketsWereCutCannotBeRead() throws {
    var capture = CaptureFixture(.h4)
    capture.advertisingReport(CaptureSession.peripheral, CaptureSession.advertising)
    capture.connected(0x40, peer: CaptureSession.peripheral)
    capture.encrypted(0x40)
    capture.att(0x40, [0x1B, 0x12, 0x00, 1, 2, 3, 4, 5, 6], fromPeripheral: true, cutTo: 12)
    capture.disconnected(0x40, reason: 0x13)
    let read = try Capture(bytes: capture.bytes)
    let peripheral = try #require(read.peripherals.first)
    do {
      _ = try ImportedScenario(peripheral: peripheral, source: "cut")
      Issue.record("a capture with cut ATT packets was imported")
    } catch {
      #expect(error.kind == .encryptedLink)
      #expect(error.record == 4)
      #expect(error.offset == capture.offsets[3])
      #expect(error.message.contains("was encrypted from record 3"))
      #expect(error.message.contains("cannot be read"))
    }
    // The same cut without encryption is a truncated packet.
    var plain = CaptureFixture(.h4)
    plain.connected(0x40, peer: CaptureSession.peripheral)
    plain.att(0x40, [0x1B, 0x12, 0x00, 1, 2, 3, 4, 5, 6], fromPeripheral: true, cutTo: 12)
    let cut = try #require(try Capture(bytes: plain.bytes).peripherals.first)
    #expect(throws: CaptureError.self) { try ImportedScenario(peripheral: cut, source: "cut") }
  }
}

/// Every way of cutting or lying about a fixture capture, tried
/// exhaustively: each is read or refused with its record and offset.
struct CaptureSweepTests {
  static let capture: CaptureFixture = {
    var capture = CaptureFixture(.monitor)
    capture.newIndex(0, address: CaptureSession.central)
    CaptureSession.write(into: &capture)
    return capture
  }()

  /// The record whose bytes hold `offset`.
  func record(holding offset: Int) -> Int {
    Self.capture.offsets.lastIndex { $0 <= offset }.map { $0 + 1 } ?? 0
  }

  @Test func everyCutOfTheFileIsRefusedAtTheRecordItFalls() {
    let bytes = Self.capture.bytes
    for length in 16..<bytes.count where !Self.capture.offsets.contains(length) {
      do {
        _ = try Capture(bytes: Array(bytes.prefix(length)))
        Issue.record("a capture cut at \(length) bytes was read")
      } catch {
        #expect(error.kind == .truncated)
        #expect(error.record == record(holding: length - 1), "cut at \(length): \(error)")
        #expect(error.offset == Self.capture.offsets[record(holding: length - 1) - 1])
      }
    }
  }

  @Test func everyLyingIncludedLengthIsRefusedAtItsRecord() {
    for (index, offset) in Self.capture.offsets.enumerated() {
      for lie in [0, 1, 3, 23, 0x0001_0000, 0xFFFF_FFFF] as [UInt32] {
        var bytes = Self.capture.bytes
        let field = offset + 4
        bytes.replaceSubrange(
          field..<field + 4,
          with: [
            UInt8(lie >> 24), UInt8(truncatingIfNeeded: lie >> 16), UInt8(truncatingIfNeeded: lie >> 8),
            UInt8(truncatingIfNeeded: lie),
          ])
        do {
          _ = try Capture(bytes: bytes)
        } catch {
          // The lie shows at its record, or at the record its bytes now run into.
          #expect(error.record != nil && error.offset != nil, "record \(index + 1), length \(lie): \(error)")
          #expect((error.record ?? 0) >= index + 1, "record \(index + 1), length \(lie): \(error)")
        }
      }
    }
  }

  @Test func droppingAnyFragmentOfTheLongNotificationIsAnError() throws {
    // The long notification is the run of records with ACL continuation fragments.
    let capture = Self.capture
    let acl = capture.offsets.indices.filter { index in
      let start = capture.offsets[index] + 24
      let flags = capture.bytes[capture.offsets[index] + 11]
      return flags == 5 && capture.bytes[start + 1] >> 4 == 1
    }
    #expect(acl.count == 3, "107 bytes in 27-byte fragments: a start and three continuations")
    for dropped in [acl[0] - 1] + acl {
      var bytes = Array(capture.bytes.prefix(capture.offsets[dropped]))
      let next = dropped + 1 < capture.offsets.count ? capture.offsets[dropped + 1] : capture.bytes.count
      bytes += capture.bytes[next...]
      do {
        _ = try Capture(bytes: bytes)
        Issue.record("a capture without record \(dropped + 1) was read")
      } catch {
        #expect([.incompleteFragments, .malformedPacket, .badLength].contains(error.kind), "\(error)")
        #expect(error.record != nil && error.offset != nil)
      }
    }
  }
}
