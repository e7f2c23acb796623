import Glibc
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Gives the connections ``HitFront`` hands on to Hummingbird's HTTP/1 channel, as if its own
/// listener had accepted them: the channel's handlers set up, then its requests handled, the
/// bytes the front had read first.
final class HandedConnections: Sendable {
    private let child = Mutex<HotHTTP1Channel?>(nil)
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    /// The channel every connection gets (Hummingbird makes it once, with the router's responder).
    func use(_ channel: HotHTTP1Channel) -> HotHTTP1Channel {
        child.withLock { $0 = channel }
        return channel
    }

    func adopt(_ descriptor: Int32, read: [UInt8]) {
        guard let child = child.withLock({ $0 }) else { return _ = close(descriptor) }
        let logger = logger
        Task {
            do {
                let value = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                    .withConnectedSocket(descriptor) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(ReplayedBytes(read))
                        }.flatMap { child.setup(channel: channel, logger: logger) }
                    }
                await child.handle(value: value, logger: logger)
            } catch {
                logger.warning("a connection handed on could not be set up: \(error)")
            }
        }
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
