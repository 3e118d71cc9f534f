import Signals
import Yams

/// Walks a scenario's YAML tree into a `Scenario`, recording every problem in
/// the document. Used by `ScenarioParser`.
struct ScenarioReader {
  let parser: ScenarioParser
  let document: ScenarioDocument

  private var modelNames: [String] { parser.models.map(\.model) }

  func read(_ root: Node) -> Scenario? {
    guard
      let entries = document.entries(
        root, of: "the scenario", allowed: ScenarioParser.topKeys, required: ["scenario", "devices"])
    else { return nil }
    var name = ""
    var description: String?
    var seed: UInt64 = 1
    var duration: Duration?
    var devices: [DeviceSpec] = []
    var timelineNode: Node?
    var expectNode: Node?
    for (key, _, value) in entries {
      switch key {
      case "scenario": name = document.text(value, "'scenario' (its name)") ?? ""
      case "description": description = document.text(value, "'description'")
      case "duration": duration = document.duration(value, "'duration'")
      case "devices": devices = readDevices(value, seed: seed)
      case "timeline": timelineNode = value
      case "expect": expectNode = value
      default: break
      }
    }
    // The seed is read apart, so one given after `devices` applies to them too.
    if let seedEntry = entries.first(where: { $0.key == "seed" }), let value = document.seed(seedEntry.value, "'seed'")
    {
      seed = value
    }
    let timeline = timelineNode.map { readTimeline($0, devices: devices, duration: duration) } ?? []
    let expectations = expectNode.map { readExpectations($0, devices: devices) } ?? []
    return Scenario(
      name: name, description: description, seed: seed, duration: duration, devices: devices, timeline: timeline,
      expectations: expectations, file: document.file)
  }

  // MARK: Devices

  private func readDevices(_ node: Node, seed: UInt64) -> [DeviceSpec] {
    guard let items = document.sequence(node, of: "'devices'") else { return [] }
    if items.isEmpty { document.fail(.invalidValue, at: node, "'devices' is empty", expected: "at least one device") }
    var devices: [DeviceSpec] = []
    for item in items {
      guard let device = readDevice(item) else { continue }
      if devices.contains(where: { $0.id == device.id }) {
        document.fail(
          .invalidValue, at: item, "device id '\(device.id)' is used twice", suggestion: "give each device its own id")
        continue
      }
      devices.append(device)
    }
    return devices
  }

  private func readDevice(_ node: Node) -> DeviceSpec? {
    // `profile` is a key only of the models declared by one (`generic`).
    let modelName = node["model"]?.string
    let declaresProfile = parser.models.first { $0.model == modelName }?.declaresProfile ?? false
    guard
      let entries = document.entries(
        node, of: "a device",
        allowed: ScenarioParser.deviceKeys.filter { declaresProfile || $0 != "profile" }, required: ["id", "model"])
    else { return nil }
    let value = { (key: String) in entries.first { $0.key == key }?.value }
    guard let idNode = value("id"), let id = document.text(idNode, "a device's 'id'") else { return nil }
    document.declaredDeviceIDs.append(id)
    guard let modelNode = value("model"), let model = document.text(modelNode, "'model'") else { return nil }
    if id.isEmpty || !id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
      document.fail(.invalidValue, at: idNode, "a device id is letters, digits, '-' and '_'", found: "'\(id)'")
    }
    guard let description = parser.models.first(where: { $0.model == model }) else {
      document.failUnknown(
        .unknownModel, at: modelNode, "unknown device model '\(model)'", name: model, among: modelNames)
      return nil
    }
    var device = DeviceSpec(id: id, model: model, location: document.location(node))
    for (key, _, node) in entries {
      switch key {
      case "name":
        device.name = document.text(node, "'name'")
        if let name = device.name, name.utf8.count > 29 {
          document.fail(
            .invalidValue, at: node, "the advertised name is too long to advertise", expected: "at most 29 bytes",
            found: "\(name.utf8.count) bytes")
        }
      case "serial": device.serial = document.text(node, "'serial'")
      case "adapter":
        device.adapter = document.text(node, "'adapter'")
        if let adapter = device.adapter, !Self.isAdapter(adapter) {
          document.fail(
            .invalidValue, at: node, "'\(adapter)' is not an adapter",
            expected: "an hci name like hci0 or an address like 00:AA:01:00:00:23")
        }
      case "advertise": device.advertisesAtStart = document.flag(node, "'advertise'") ?? true
      case "config":
        device.settings = readSettings(node, specs: description.settings, of: "\(model)'s config")
        locate(node, prefix: "config", in: &device)
      case "client":
        device.client = readSettings(node, specs: description.clientSettings, of: "\(model)'s client settings")
        locate(node, prefix: "client", in: &device)
      case "profile":
        device.locations["profile"] = document.location(node)
        device.profile = ProfileReader.read(node, in: document)
      case "streams":
        let names = description.streams.map(\.name)
        guard let streams = document.entries(node, of: "\(model)'s streams", allowed: names) else { continue }
        for (stream, _, source) in streams {
          device.locations["streams.\(stream)"] = document.location(source)
          if let spec = readSource(source, what: "stream '\(stream)'") { device.streams[stream] = spec }
        }
      default: break
      }
    }
    // Every declared default is filled in: a binding reads complete settings.
    device.settings = description.settings.withDefaults(device.settings)
    device.client = description.clientSettings.withDefaults(device.client)
    return device
  }

  static func isAdapter(_ text: String) -> Bool {
    if text.hasPrefix("hci"), let n = Int(text.dropFirst(3)), n >= 0 { return true }
    let parts = text.split(separator: ":")
    return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
  }

  /// Where each key of a settings mapping is written, for errors found later (a file a setting names).
  private func locate(_ node: Node, prefix: String, in device: inout DeviceSpec) {
    guard case .mapping(let mapping) = node else { return }
    for (key, value) in mapping {
      if let name = key.string { device.locations["\(prefix).\(name)"] = document.location(value) }
    }
  }

  private func readSettings(_ node: Node, specs: [SettingSpec], of what: String) -> [String: SettingValue] {
    guard let entries = document.entries(node, of: what, allowed: specs.map(\.key)) else { return [:] }
    var settings: [String: SettingValue] = [:]
    for (key, _, value) in entries {
      guard let spec = specs.first(where: { $0.key == key }) else { continue }
      if let setting = document.setting(value, spec, "'\(key)'") { settings[key] = setting }
    }
    return settings
  }

  // MARK: Sources

  static let sourceKinds = [
    "constant", "ramp", "sine", "noise", "ecg", "ppg", "eda", "temperature", "csv", "e4-export", "muse-lsl",
    "sum",
  ]
  static let e4ExportSignals = ["bvp", "eda", "temperature", "acc.x", "acc.y", "acc.z"]
  static let museLSLChannels = ["TP9", "AF7", "AF8", "TP10", "Right AUX"]

  func readSource(_ node: Node, what: String) -> SourceSpec? {
    if case .scalar = node, let value = document.number(node, "\(what) (a constant)") { return .constant(value) }
    if case .scalar = node { return nil }
    let errorsBefore = document.errors.count
    guard let entries = document.entries(node, of: what, allowed: Self.sourceKinds) else { return nil }
    guard entries.count == 1, let (kind, _, body) = entries.first else {
      // An entry refused as an unknown key has its own error already.
      if !entries.isEmpty || document.errors.count == errorsBefore {
        document.fail(
          .invalidValue, at: node, "\(what) must name exactly one kind of source",
          expected: "one of " + Self.sourceKinds.joined(separator: ", "), found: "\(entries.count) kinds")
      }
      return nil
    }
    switch kind {
    case "constant":
      return document.number(body, "a constant").map(SourceSpec.constant)
    case "ramp":
      guard
        let fields = fields(body, of: "a ramp", allowed: ["from", "to", "over"], required: ["from", "to", "over"]),
        let from = fields["from"].flatMap({ document.number($0, "a ramp's 'from'") }),
        let to = fields["to"].flatMap({ document.number($0, "a ramp's 'to'") }),
        let over = fields["over"].flatMap({ document.duration($0, "a ramp's 'over'") })
      else { return nil }
      return .ramp(from: from, to: to, over: over)
    case "sine":
      guard
        let fields = fields(
          body, of: "a sine", allowed: ["amplitude", "frequency", "phase", "offset"],
          required: ["amplitude", "frequency"]),
        let amplitude = fields["amplitude"].flatMap({ document.number($0, "a sine's 'amplitude'") }),
        let frequency = fields["frequency"].flatMap({ document.number($0, "a sine's 'frequency'", in: 0...10_000) })
      else { return nil }
      let phase = fields["phase"].flatMap { document.number($0, "a sine's 'phase'") } ?? 0
      let offset = fields["offset"].flatMap { document.number($0, "a sine's 'offset'") } ?? 0
      return .sine(amplitude: amplitude, frequency: frequency, phase: phase, offset: offset)
    case "noise":
      guard let fields = fields(body, of: "noise", allowed: ["mean", "sd", "seed"], required: ["sd"]),
        let sd = fields["sd"].flatMap({ document.number($0, "noise's 'sd'", in: 0...Double.greatestFiniteMagnitude) })
      else { return nil }
      return .noise(
        mean: fields["mean"].flatMap { document.number($0, "noise's 'mean'") } ?? 0, standardDeviation: sd,
        seed: fields["seed"].flatMap { document.seed($0, "noise's 'seed'") })
    case "ecg":
      guard
        let fields = fields(
          body, of: "an ecg source", allowed: ["heart-rate", "noise", "arrhythmia", "seed"], required: ["heart-rate"]),
        let rate = fields["heart-rate"].flatMap({ document.number($0, "'heart-rate'", in: 20...250) })
      else { return nil }
      let noise = fields["noise"].flatMap { document.number($0, "an ecg's 'noise'", in: 0...10) } ?? 0.01
      var episodes: [ClosedRange<Double>] = []
      if let list = fields["arrhythmia"], let items = document.sequence(list, of: "'arrhythmia' (episodes)") {
        for item in items {
          guard
            let episode = self.fields(
              item, of: "an arrhythmia episode", allowed: ["from", "to"], required: ["from", "to"]),
            let from = episode["from"].flatMap({ document.duration($0, "an episode's 'from'", allowZero: true) }),
            let to = episode["to"].flatMap({ document.duration($0, "an episode's 'to'") })
          else { continue }
          guard from < to else {
            document.fail(.invalidValue, at: item, "an arrhythmia episode must end after it starts")
            continue
          }
          episodes.append(from.seconds...to.seconds)
        }
      }
      return .ecg(
        heartRate: rate, noise: noise, arrhythmia: episodes,
        seed: fields["seed"].flatMap { document.seed($0, "an ecg's 'seed'") })
    case "ppg":
      guard
        let fields = fields(
          body, of: "a ppg source", allowed: ["heart-rate", "variability", "amplitude", "noise", "seed"],
          required: ["heart-rate"]),
        let rate = fields["heart-rate"].flatMap({ document.number($0, "'heart-rate'", in: 20...240) })
      else { return nil }
      return .ppg(
        heartRate: rate,
        variability: fields["variability"].flatMap { document.number($0, "'variability'", in: 0...0.5) } ?? 0.03,
        amplitude: fields["amplitude"].flatMap { document.number($0, "'amplitude'") } ?? 60,
        noise: fields["noise"].flatMap { document.number($0, "a ppg's 'noise'", in: 0...1000) } ?? 0,
        seed: fields["seed"].flatMap { document.seed($0, "a ppg's 'seed'") })
    case "eda":
      guard
        let fields = fields(
          body, of: "an eda source", allowed: ["tonic", "drift", "responses", "spontaneous-rate", "noise", "seed"])
      else { return nil }
      var responses: [SkinConductanceResponse] = []
      if let list = fields["responses"], let items = document.sequence(list, of: "'responses'") {
        for item in items {
          guard
            let response = self.fields(
              item, of: "a skin conductance response", allowed: ["at", "amplitude"], required: ["at"]),
            let at = response["at"].flatMap({ document.duration($0, "a response's 'at'", allowZero: true) })
          else { continue }
          let amplitude =
            response["amplitude"].flatMap { document.number($0, "a response's 'amplitude'", in: 0...50) } ?? 0.3
          responses.append(SkinConductanceResponse(onset: at.seconds, amplitude: amplitude))
        }
      }
      return .eda(
        tonic: fields["tonic"].flatMap { document.number($0, "'tonic'", in: 0...100) } ?? 2,
        drift: fields["drift"].flatMap { document.number($0, "'drift'") } ?? 0, responses: responses,
        spontaneousRate: fields["spontaneous-rate"].flatMap { document.number($0, "'spontaneous-rate'", in: 0...60) }
          ?? 0,
        noise: fields["noise"].flatMap { document.number($0, "an eda's 'noise'", in: 0...10) } ?? 0.005,
        seed: fields["seed"].flatMap { document.seed($0, "an eda's 'seed'") })
    case "temperature":
      guard
        let fields = fields(
          body, of: "a temperature source", allowed: ["start", "trend", "wander", "noise", "seed"])
      else { return nil }
      return .temperature(
        start: fields["start"].flatMap { document.number($0, "'start'", in: -40...60) } ?? 33,
        trendPerHour: fields["trend"].flatMap { document.number($0, "'trend' (°C per hour)") } ?? 0.3,
        wander: fields["wander"].flatMap { document.number($0, "'wander'", in: 0...10) } ?? 0.1,
        noise: fields["noise"].flatMap { document.number($0, "a temperature's 'noise'", in: 0...10) } ?? 0.01,
        seed: fields["seed"].flatMap { document.seed($0, "a temperature's 'seed'") })
    case "e4-export":
      guard
        let fields = fields(
          body, of: "an e4-export source", allowed: ["folder", "signal", "loop"], required: ["folder", "signal"]),
        let folder = fields["folder"].flatMap({ document.text($0, "an export's 'folder'") }),
        let signal = fields["signal"].flatMap({
          document.setting($0, SettingSpec("signal", .choice(Self.e4ExportSignals), help: ""), "an export's 'signal'")?
            .text
        })
      else { return nil }
      return .e4Export(
        folder: folder, signal: signal, loops: fields["loop"].flatMap { document.flag($0, "'loop'") } ?? false)
    case "muse-lsl":
      guard
        let fields = fields(
          body, of: "a muse-lsl recording", allowed: ["file", "channel", "loop"], required: ["file", "channel"]),
        let file = fields["file"].flatMap({ document.text($0, "a recording's 'file'") }),
        let channel = fields["channel"].flatMap({
          document.setting(
            $0, SettingSpec("channel", .choice(Self.museLSLChannels), help: ""), "a recording's 'channel'")?
            .text
        })
      else { return nil }
      return .museLSL(
        file: file, channel: channel, loops: fields["loop"].flatMap { document.flag($0, "'loop'") } ?? false)
    case "csv":
      guard
        let fields = fields(
          body, of: "a csv recording", allowed: ["file", "time-column", "column", "interpolation", "loop"],
          required: ["file", "column"]),
        let file = fields["file"].flatMap({ document.text($0, "a recording's 'file'") }),
        let column = fields["column"].flatMap({ document.text($0, "a recording's 'column'") })
      else { return nil }
      let timeColumn = fields["time-column"].flatMap { document.text($0, "'time-column'") } ?? "time"
      let interpolation =
        fields["interpolation"].flatMap {
          document.setting($0, SettingSpec("interpolation", .choice(["hold", "linear"]), help: ""), "'interpolation'")?
            .text
        } ?? "hold"
      let loops = fields["loop"].flatMap { document.flag($0, "'loop'") } ?? false
      return .csv(file: file, timeColumn: timeColumn, valueColumn: column, interpolation: interpolation, loops: loops)
    case "sum":
      guard let items = document.sequence(body, of: "a sum (of sources)") else { return nil }
      let terms = items.compactMap { readSource($0, what: "a term of a sum") }
      guard terms.count == items.count, !terms.isEmpty else {
        if items.isEmpty { document.fail(.invalidValue, at: body, "a sum needs at least one source") }
        return nil
      }
      return .sum(terms)
    default:
      return nil
    }
  }

  /// A mapping's values by key (after the key checks).
  func fields(_ node: Node, of what: String, allowed: [String], required: [String] = []) -> [String: Node]? {
    guard let entries = document.entries(node, of: what, allowed: allowed, required: required) else { return nil }
    guard required.allSatisfy({ key in entries.contains { $0.key == key } }) else { return nil }
    return Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
  }

  // MARK: Timeline

  static let genericActions: [ActionSpec] = [
    ActionSpec("advertise", help: "start advertising (again)"),
    ActionSpec("stop-advertising", help: "stop advertising; connections stay"),
    ActionSpec("refuse-connections", help: "disconnect every new connection at once"),
    ActionSpec("accept-connections", help: "accept connections again"),
    ActionSpec("disconnect", help: "end every connection from the peripheral side"),
    ActionSpec(
      "stall",
      parameters: [
        SettingSpec("for", .duration, help: "how long"),
        SettingSpec("drop", .flag, default: .flag(false), help: "lose what is sent meanwhile instead of delaying it"),
      ], help: "hold notifications"),
    ActionSpec(
      "drop", parameters: [SettingSpec("count", .integer(1...1_000_000), default: .integer(1), help: "how many")],
      help: "lose the next notifications"),
    ActionSpec(
      "corrupt", parameters: [SettingSpec("count", .integer(1...1_000_000), default: .integer(1), help: "how many")],
      help: "garble the next notifications"),
    ActionSpec(
      "delay-responses", parameters: [SettingSpec("by", .duration, help: "how late")],
      help: "answer reads and writes late"),
    ActionSpec(
      "reject-writes",
      parameters: [
        SettingSpec("error", .choice(ATTErrorName.names), default: .text("write-not-permitted"), help: "the ATT error"),
        SettingSpec("count", .integer(1...1_000_000), help: "how many writes (default: until accept-writes)"),
      ], help: "refuse writes with an ATT error"),
    ActionSpec("accept-writes", help: "accept writes again"),
    ActionSpec(
      "set-stream", parameters: [SettingSpec("stream", .text, help: "the stream")],
      help: "change what a stream carries (with 'source')"),
    ActionSpec(
      "rename", parameters: [SettingSpec("name", .text, help: "the new advertised name")],
      help: "change the advertised name"),
    ActionSpec("end", help: "end the run"),
  ]

  static let requiredParameters: [String: [String]] = [
    "stall": ["for"], "delay-responses": ["by"], "set-stream": ["stream", "source"], "rename": ["name"],
  ]

  private func readTimeline(_ node: Node, devices: [DeviceSpec], duration: Duration?) -> [TimelineEvent] {
    guard let items = document.sequence(node, of: "'timeline'") else { return [] }
    return items.compactMap { readEvent($0, devices: devices, duration: duration) }
  }

  private func readEvent(_ node: Node, devices: [DeviceSpec], duration: Duration?) -> TimelineEvent? {
    guard case .mapping(let mapping) = node else {
      document.fail(
        .wrongType, at: node, "a timeline event must be a mapping", expected: "at/after, device, do, …",
        found: ScenarioDocument.describe(node))
      return nil
    }
    // Which keys are allowed depends on the action, so find `do` first.
    let actionNode = mapping.first { $0.key.string == "do" }?.value
    guard let actionNode, let actionName = document.text(actionNode, "'do'") else {
      if actionNode == nil { document.fail(.missingKey, at: node, "a timeline event needs 'do' (what happens)") }
      return nil
    }
    let deviceNode = mapping.first { $0.key.string == "device" }?.value
    let declared = document.declaredDeviceIDs
    let deviceID = deviceNode.flatMap { document.text($0, "'device'") } ?? (declared.count == 1 ? declared[0] : nil)
    let device = deviceID.flatMap { id in devices.first { $0.id == id } }
    // A device that is declared but invalid has its own errors already.
    if let deviceID, device == nil, declared.contains(deviceID) { return nil }
    if deviceNode == nil, device == nil, actionName != "end" {
      document.fail(
        .missingKey, at: node, "a '\(actionName)' event needs 'device' (the scenario has \(devices.count) devices)")
      return nil
    }
    if let deviceNode, let deviceID, device == nil {
      document.failUnknown(
        .unknownReference, at: deviceNode, "no device has id '\(deviceID)'", name: deviceID, among: devices.map(\.id))
      return nil
    }
    let description = device.flatMap { d in parser.models.first { $0.model == d.model } }
    let actions = Self.genericActions + (description?.actions ?? [])
    guard let spec = actions.first(where: { $0.name == actionName }) else {
      document.failUnknown(
        .unknownReference, at: actionNode,
        "unknown action '\(actionName)'"
          + (device.map { " for \(ScenarioDocument.article($0.model)) \($0.model)" } ?? ""), name: actionName,
        among: actions.map(\.name))
      return nil
    }
    var allowed = ["at", "after", "occurrence", "delay", "characteristic", "device", "do"] + spec.parameters.map(\.key)
    if actionName == "set-stream" { allowed.append("source") }
    let required =
      Self.requiredParameters[actionName]
      ?? spec.parameters.filter {
        $0.defaultValue == nil && description?.actions.contains { $0.name == actionName } == true
      }.map(\.key)
    guard let fields = fields(node, of: "a '\(actionName)' event", allowed: allowed, required: required) else {
      return nil
    }
    // When.
    let trigger: TimelineEvent.Trigger
    switch (fields["at"], fields["after"]) {
    case (let at?, nil):
      guard let time = document.duration(at, "'at'", allowZero: true) else { return nil }
      if let duration, time > duration {
        document.fail(
          .invalidValue, at: at, "this event is after the scenario ends",
          expected: "at most \(ScenarioDuration.format(duration))",
          found: ScenarioDuration.format(time))
        return nil
      }
      trigger = .at(time)
    case (nil, let after?):
      // What the device sees on its link, or what its firmware understood the central to do.
      let events = DeviceEventFeed.linkEventNames + (description?.firmwareEvents ?? [])
      guard let event = document.text(after, "'after'"), let id = device?.id else {
        if device == nil { document.fail(.missingKey, at: node, "an 'after' event needs 'device'") }
        return nil
      }
      guard events.contains(event) else {
        let model = device.map { "\(ScenarioDocument.article($0.model)) \($0.model)" } ?? "the device"
        document.failUnknown(
          .unknownReference, at: after, "\(model) sees no event '\(event)' to wait for", name: event, among: events)
        return nil
      }
      let delay = fields["delay"].flatMap { document.duration($0, "'delay'", allowZero: true) } ?? .zero
      var occurrence = 1
      if let node = fields["occurrence"] {
        guard let number = document.integer(node, "'occurrence'", in: 1...10_000)
        else { return nil }
        occurrence = number
      }
      var characteristic: String?
      if let node = fields["characteristic"] {
        guard event == "subscribed" else {
          document.fail(
            .invalidValue, at: node, "'characteristic' goes with 'after: subscribed'",
            suggestion: "remove it, or wait for 'subscribed'")
          return nil
        }
        guard let device, let name = self.characteristic(node, of: device, description: description) else {
          return nil
        }
        characteristic = name
      }
      trigger = .after(event: event, device: id, characteristic: characteristic, delay: delay, count: occurrence)
    case (nil, nil):
      document.fail(.missingKey, at: node, "a timeline event needs 'at' (a time) or 'after' (an event)")
      return nil
    default:
      document.fail(.invalidValue, at: fields["after"], "give 'at' or 'after', not both")
      return nil
    }
    if fields["characteristic"] != nil, fields["after"] == nil {
      document.fail(.invalidValue, at: fields["characteristic"], "'characteristic' goes with 'after: subscribed'")
      return nil
    }
    if fields["occurrence"] != nil, fields["after"] == nil {
      document.fail(.invalidValue, at: fields["occurrence"], "'occurrence' goes with 'after'")
      return nil
    }
    if fields["delay"] != nil, fields["after"] == nil {
      document.fail(
        .invalidValue, at: fields["delay"], "'delay' goes with 'after'",
        suggestion: "use 'at' for a time from the start")
      return nil
    }
    guard let action = readAction(actionName, spec: spec, fields: fields, device: device, description: description)
    else {
      return nil
    }
    return TimelineEvent(trigger: trigger, device: device?.id, action: action, location: document.location(node))
  }

  private func readAction(
    _ name: String, spec: ActionSpec, fields: [String: Node], device: DeviceSpec?, description: DeviceDescription?
  ) -> ScenarioAction? {
    var arguments: [String: SettingValue] = [:]
    for parameter in spec.parameters {
      if let node = fields[parameter.key] {
        guard let value = document.setting(node, parameter, "'\(parameter.key)'") else { return nil }
        arguments[parameter.key] = value
      } else if let value = parameter.defaultValue {
        arguments[parameter.key] = value
      }
    }
    switch name {
    case "advertise": return .advertise
    case "stop-advertising": return .stopAdvertising
    case "refuse-connections": return .acceptConnections(false)
    case "accept-connections": return .acceptConnections(true)
    case "disconnect": return .disconnect
    case "stall":
      guard let span = arguments["for"]?.duration, span > .zero else {
        document.fail(.invalidValue, at: fields["for"], "a stall must last longer than zero")
        return nil
      }
      return .stall(span, drop: arguments["drop"]?.flag ?? false)
    case "drop": return .drop(count: arguments["count"]?.integer ?? 1)
    case "corrupt": return .corrupt(count: arguments["count"]?.integer ?? 1)
    case "delay-responses": return .delayResponses(by: arguments["by"]?.duration ?? .zero)
    case "reject-writes":
      let code = ATTErrorName.code(arguments["error"]?.text ?? "write-not-permitted")
      return .rejectWrites(error: code, count: arguments["count"]?.integer)
    case "accept-writes": return .rejectWrites(error: nil, count: nil)
    case "set-stream":
      guard let stream = arguments["stream"]?.text, let sourceNode = fields["source"] else { return nil }
      let streams = description?.streams.map(\.name) ?? []
      guard streams.contains(stream) else {
        document.failUnknown(
          .unknownReference, at: fields["stream"],
          "\(ScenarioDocument.article(device?.model ?? "device")) \(device?.model ?? "device") has no stream '\(stream)'",
          name: stream, among: streams)
        return nil
      }
      return readSource(sourceNode, what: "the new source of '\(stream)'").map { .setStream(stream, $0) }
    case "rename":
      guard let newName = arguments["name"]?.text else { return nil }
      if newName.utf8.count > 29 {
        document.fail(
          .invalidValue, at: fields["name"], "the advertised name is too long", expected: "at most 29 bytes")
        return nil
      }
      return .rename(newName)
    case "end": return .end
    default: return .device(name: name, arguments: arguments)
    }
  }

  // MARK: Expectations

  static let checkKinds = [
    "connected-within", "samples", "metric", "event", "error", "no-errors", "central-connected-within",
    "central-subscribed", "central-wrote", "central-reconnected", "central-stayed-subscribed", "no-att-errors",
    "firmware-event",
  ]

  private func readExpectations(_ node: Node, devices: [DeviceSpec]) -> [Expectation] {
    guard let items = document.sequence(node, of: "'expect'") else { return [] }
    return items.compactMap { readExpectation($0, devices: devices) }
  }

  private func readExpectation(_ node: Node, devices: [DeviceSpec]) -> Expectation? {
    guard let entries = document.entries(node, of: "an expectation", allowed: ["device"] + Self.checkKinds) else {
      return nil
    }
    let checks = entries.filter { $0.key != "device" }
    guard checks.count == 1, let (kind, _, body) = checks.first else {
      document.fail(
        .invalidValue, at: node, "an expectation must have exactly one check",
        expected: "one of " + Self.checkKinds.joined(separator: ", "), found: "\(checks.count)")
      return nil
    }
    let deviceNode = entries.first { $0.key == "device" }?.value
    let declared = document.declaredDeviceIDs
    let id = deviceNode.flatMap { document.text($0, "'device'") } ?? (declared.count == 1 ? declared[0] : nil)
    if let id, declared.contains(id), !devices.contains(where: { $0.id == id }) { return nil }
    guard let id, let device = devices.first(where: { $0.id == id }) else {
      if let deviceNode {
        document.failUnknown(
          .unknownReference, at: deviceNode, "no device has id '\(id ?? "")'", name: id ?? "", among: devices.map(\.id))
      } else if !devices.isEmpty {
        document.fail(
          .missingKey, at: node, "an expectation needs 'device' (the scenario has \(devices.count) devices)")
      }
      return nil
    }
    let description = parser.models.first { $0.model == device.model }
    let location = document.location(node)
    switch kind {
    case "connected-within":
      return document.duration(body, "'connected-within'").map {
        Expectation(device: id, check: .connected(within: $0), location: location)
      }
    case "samples":
      guard
        let fields = fields(
          body, of: "a samples check",
          allowed: ["stream", "min-count", "max-count", "rate", "min", "max", "mean", "max-gap"],
          required: ["stream"]),
        let streamNode = fields["stream"], let stream = document.text(streamNode, "'stream'")
      else { return nil }
      let streams = description?.streams.map(\.name) ?? []
      guard streams.contains(stream) else {
        document.failUnknown(
          .unknownReference, at: streamNode,
          "\(ScenarioDocument.article(device.model)) \(device.model) has no stream '\(stream)'", name: stream,
          among: streams
        )
        return nil
      }
      let minCount = fields["min-count"].flatMap { document.integer($0, "'min-count'", in: 0...Int.max) }
      let maxCount = fields["max-count"].flatMap { document.integer($0, "'max-count'", in: 0...Int.max) }
      var count: ClosedRange<Int>?
      if minCount != nil || maxCount != nil {
        let low = minCount ?? 0
        let high = maxCount ?? Int.max
        guard low <= high else {
          document.fail(.invalidValue, at: fields["max-count"], "'max-count' is below 'min-count'")
          return nil
        }
        count = low...high
      }
      return Expectation(
        device: id,
        check: .samples(
          stream: stream, count: count, rate: fields["rate"].flatMap { document.tolerance($0, "'rate'") },
          minimum: fields["min"].flatMap { document.number($0, "'min'") },
          maximum: fields["max"].flatMap { document.number($0, "'max'") },
          mean: fields["mean"].flatMap { document.tolerance($0, "'mean'") },
          maxGap: fields["max-gap"].flatMap { document.duration($0, "'max-gap'") }),
        location: location)
    case "metric":
      guard let fields = fields(body, of: "a metric check", allowed: ["name", "value"], required: ["name", "value"]),
        let nameNode = fields["name"], let name = document.text(nameNode, "a metric's 'name'"),
        let value = fields["value"].flatMap({ document.tolerance($0, "a metric's 'value'") })
      else { return nil }
      let metrics = description?.metrics ?? []
      guard metrics.contains(name) else {
        document.fail(
          .unknownReference, at: nameNode,
          "\(ScenarioDocument.article(device.model)) \(device.model)'s client has no metric '\(name)'",
          expected: metrics.isEmpty ? "none (it has no metrics)" : "one of " + metrics.joined(separator: ", "),
          suggestion: ScenarioDocument.closest(to: name, in: metrics).map { "did you mean '\($0)'?" })
        return nil
      }
      return Expectation(device: id, check: .metric(name, value), location: location)
    case "event":
      guard
        let fields = fields(body, of: "an event check", allowed: ["name", "count", "min", "max"], required: ["name"]),
        let nameNode = fields["name"], let name = document.text(nameNode, "an event's 'name'")
      else { return nil }
      let events = DeviceDescription.commonEvents + (description?.events ?? [])
      guard events.contains(name) else {
        document.failUnknown(
          .unknownReference, at: nameNode,
          "\(ScenarioDocument.article(device.model)) \(device.model)'s client reports no event '\(name)'", name: name,
          among: events)
        return nil
      }
      // `max` alone bounds from zero; otherwise the event is wanted at least once.
      guard let count = count(fields) else { return nil }
      return Expectation(device: id, check: .event(name, count: count), location: location)
    case "error":
      return document.text(body, "'error' (text the error contains)").map {
        Expectation(device: id, check: .error(containing: $0), location: location)
      }
    case "no-errors":
      guard let flag = document.flag(body, "'no-errors'") else { return nil }
      guard flag else {
        document.fail(
          .invalidValue, at: body, "'no-errors: false' checks nothing", suggestion: "remove it, or use 'error: TEXT'")
        return nil
      }
      return Expectation(device: id, check: .noErrors, location: location)
    case "central-connected-within":
      return document.duration(body, "'central-connected-within'").map {
        Expectation(device: id, check: .centralConnected(within: $0), location: location)
      }
    case "central-subscribed":
      // `central-subscribed: bvp`, or `{characteristic: bvp, within: 5s}`.
      if case .scalar = body {
        return characteristic(body, of: device, description: description).map {
          Expectation(device: id, check: .centralSubscribed(characteristic: $0, within: nil), location: location)
        }
      }
      guard
        let fields = fields(
          body, of: "a central-subscribed check", allowed: ["characteristic", "within"], required: ["characteristic"]),
        let name = fields["characteristic"].flatMap({ characteristic($0, of: device, description: description) })
      else { return nil }
      let within = fields["within"].flatMap { document.duration($0, "'within'") }
      if fields["within"] != nil, within == nil { return nil }
      return Expectation(
        device: id, check: .centralSubscribed(characteristic: name, within: within), location: location)
    case "central-wrote":
      guard
        let fields = fields(
          body, of: "a central-wrote check", allowed: ["characteristic", "hex", "text", "count", "min", "max"],
          required: ["characteristic"]),
        let name = fields["characteristic"].flatMap({ characteristic($0, of: device, description: description) })
      else { return nil }
      var pattern: WritePattern?
      switch (fields["hex"], fields["text"]) {
      case (let hex?, nil): pattern = regex(hex, "'hex'").map { WritePattern(.hex, $0) }
      case (nil, let text?): pattern = regex(text, "'text'").map { WritePattern(.text, $0) }
      case (nil, nil): break
      case (_, let text?):
        document.fail(.invalidValue, at: text, "give 'hex' or 'text', not both")
        return nil
      }
      if fields["hex"] != nil || fields["text"] != nil, pattern == nil { return nil }
      guard let count = count(fields) else { return nil }
      return Expectation(
        device: id, check: .centralWrote(characteristic: name, pattern: pattern, count: count), location: location)
    case "central-reconnected":
      guard
        let fields = fields(
          body, of: "a central-reconnected check", allowed: ["within", "subscribed-again"], required: ["within"]),
        let within = fields["within"].flatMap({ document.duration($0, "'within'") })
      else { return nil }
      var again: [String] = []
      if let node = fields["subscribed-again"] {
        let items: [Node]
        if case .scalar = node {
          items = [node]
        } else {
          items = document.sequence(node, of: "'subscribed-again'") ?? []
        }
        for item in items {
          guard let name = characteristic(item, of: device, description: description) else { return nil }
          again.append(name)
        }
      }
      return Expectation(
        device: id, check: .centralReconnected(within: within, subscribedAgain: again), location: location)
    case "central-stayed-subscribed":
      return characteristic(body, of: device, description: description).map {
        Expectation(device: id, check: .centralStayedSubscribed(characteristic: $0), location: location)
      }
    case "no-att-errors":
      guard let flag = document.flag(body, "'no-att-errors'") else { return nil }
      guard flag else {
        document.fail(.invalidValue, at: body, "'no-att-errors: false' checks nothing", suggestion: "remove it")
        return nil
      }
      return Expectation(device: id, check: .noATTErrors, location: location)
    case "firmware-event":
      guard
        let fields = fields(
          body, of: "a firmware-event check", allowed: ["name", "count", "min", "max"], required: ["name"]),
        let nameNode = fields["name"], let name = document.text(nameNode, "a firmware event's 'name'")
      else { return nil }
      let known = description?.firmwareEvents ?? []
      guard known.contains(name) else {
        document.failUnknown(
          .unknownReference, at: nameNode,
          "\(ScenarioDocument.article(device.model)) \(device.model)'s firmware reports no event '\(name)'", name: name,
          among: known)
        return nil
      }
      guard let count = count(fields) else { return nil }
      return Expectation(device: id, check: .firmwareEvent(name, count: count), location: location)
    default:
      return nil
    }
  }

  /// A characteristic's key the model has, or an error listing the model's keys.
  private func characteristic(_ node: Node, of device: DeviceSpec, description: DeviceDescription?) -> String? {
    guard let name = document.text(node, "a characteristic") else { return nil }
    // A declared profile that is invalid has its own errors already: its keys are not known.
    if device.profile == nil, device.locations["profile"] != nil { return name }
    let known = device.profile?.gatt.characteristicKeys ?? description?.characteristics ?? []
    guard known.isEmpty || known.contains(name) else {
      document.failUnknown(
        .unknownReference, at: node,
        "\(ScenarioDocument.article(device.model)) \(device.model) has no characteristic '\(name)'", name: name,
        among: known)
      return nil
    }
    return name
  }

  /// A regular expression, checked now so a bad one is an error with its place.
  private func regex(_ node: Node, _ what: String) -> String? {
    guard let text = document.text(node, what) else { return nil }
    do {
      _ = try Regex(text)
    } catch {
      document.fail(.invalidValue, at: node, "\(what) is not a regular expression: \(error)", found: "'\(text)'")
      return nil
    }
    return text
  }

  /// `count`, or `min`/`max` (at least once when neither is given).
  private func count(_ fields: [String: Node]) -> ClosedRange<Int>? {
    if let exact = fields["count"] {
      if fields["min"] != nil || fields["max"] != nil {
        document.fail(.invalidValue, at: exact, "give 'count', or 'min'/'max', not both")
        return nil
      }
      return document.integer(exact, "'count'", in: 0...Int.max).map { $0...$0 }
    }
    let low = fields["min"].flatMap { document.integer($0, "'min'", in: 0...Int.max) } ?? (fields["max"] == nil ? 1 : 0)
    let high = fields["max"].flatMap { document.integer($0, "'max'", in: 0...Int.max) } ?? Int.max
    guard low <= high else {
      document.fail(.invalidValue, at: fields["max"], "'max' is below 'min'")
      return nil
    }
    return low...high
  }
}
