import Glibc
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Gives the connections ``HitFront`` hands on to Hummingbird's HTTP/1 channel, as if its own
/// listener had accepted them: the channel's handlers set up, then its requests handled, the
/// bytes the front had read first. Hummingbird's graceful shutdown knows only the connections its
/// listener accepted, so these are kept here and let finish their responses at the end (``quiesce(within:)``).
final class HandedConnections: Sendable {
    private let child = Mutex<HotHTTP1Channel?>(nil)
    private let logger: Logger
    private let live = Mutex<(closing: Bool, channels: [ObjectIdentifier: any Channel])>((false, [:]))
    /// How long a client may take none of a response in progress (Hummingbird's own idle timeout
    /// waits while one is), as ``HitFront`` allows for its own.
    private let idleTimeout: TimeAmount

    init(logger: Logger, idleTimeout: TimeAmount) {
        self.logger = logger
        self.idleTimeout = idleTimeout
    }

    /// The channel every connection gets (Hummingbird makes it once, with the router's responder).
    func use(_ channel: HotHTTP1Channel) -> HotHTTP1Channel {
        child.withLock { $0 = channel }
        return channel
    }

    func adopt(_ descriptor: Int32, read: [UInt8]) {
        guard let child = child.withLock({ $0 }), !live.withLock({ $0.closing }) else { return _ = close(descriptor) }
        let (logger, idle) = (logger, idleTimeout)
        Task {
            do {
                let value = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                    .withConnectedSocket(descriptor) { channel in
                        self.keep(channel)
                        return channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandlers([SentBeforeClosed(), IdleStateHandler(writeTimeout: idle), StalledReader(),
                                                                                 ReplayedBytes(read)])
                        }.flatMap { child.setup(channel: channel, logger: logger) }
                    }
                await child.handle(value: value, logger: logger)
            } catch {
                logger.warning("a connection handed on could not be set up: \(error)")
            }
        }
    }

    /// Holds `channel` until it closes; one handed on after shutdown began is closed at once.
    private func keep(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        guard live.withLock({ state in
            if !state.closing { state.channels[id] = channel }
            return !state.closing
        }) else { return channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in self.live.withLock { _ = $0.channels.removeValue(forKey: id) } }
    }

    /// At the server's end: asks every connection handed on to close once its response in
    /// progress is sent (an idle one closes now), as Hummingbird does its own, and waits for
    /// them, up to `seconds`; what is left then is closed. Connections handed on later are closed.
    func quiesce(within seconds: Double) async {
        let channels = live.withLock { state in
            state.closing = true
            return Array(state.channels.values)
        }
        for channel in channels {
            channel.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !live.withLock({ $0.channels.isEmpty }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for channel in live.withLock({ Array($0.channels.values) }) { channel.close(promise: nil) }
    }
}

/// Closes a connection whose client has taken none of a response for the idle timeout: nothing
/// written has left for that long and more waits to be (the channel is not writable). A
/// connection that is merely idle, or waiting for a slow answer, is writable and left alone.
private final class StalledReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .write? = event as? IdleStateHandler.IdleStateEvent else { return context.fireUserInboundEventTriggered(event) }
        if !context.channel.isWritable { context.close(promise: nil) }
    }
}

/// Once the server is shutting down (a quiesce event came), holds a close back until what was
/// written before it has gone to the socket. Hummingbird closes a quiesced connection as soon as
/// its response's end is written, and NIO drops the writes still queued then: a client reading
/// slowly lost the rest of its download. An empty write queued behind them completes after them.
/// Before the shutdown, closes pass at once (the idle timeouts' among them).
private final class SentBeforeClosed: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    private var draining = false

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { draining = true }
        context.fireUserInboundEventTriggered(event)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard draining, mode == .all, context.channel.isActive else { return context.close(mode: mode, promise: promise) }
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(IOData.byteBuffer(ByteBuffer())), promise: sent)
        sent.futureResult.assumeIsolated().whenComplete { _ in context.close(mode: mode, promise: promise) }
    }
}

/// The bytes the front read of a connection before handing it on, passed on as its first read.
private final class ReplayedBytes: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        if !bytes.isEmpty {
            context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: bytes)))
            context.fireChannelReadComplete()
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
