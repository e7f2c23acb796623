import CThumbcacheAPI
import Thumbcache

/// How a Swift error reaches a C caller: a status code for the program to act on, and the
/// error's words (which name the file) for the person reading them.
enum Status {
    /// Records `error` as the calling thread's message and returns its code.
    static func fail(_ error: any Error) -> thumbcache_status {
        fail(code(of: error), String(describing: error))
    }

    static func fail(_ status: thumbcache_status, _ message: String) -> thumbcache_status {
        thumbcache_binding_set_error(message)
        return status
    }

    static func code(of error: any Error) -> thumbcache_status {
        switch error {
        case let error as FileError:
            if case .changedWhileReading = error.reason { return THUMBCACHE_ERROR_DECODE }
            return THUMBCACHE_ERROR_UNREADABLE
        case let error as ImagingError:
            switch error.reason {
            case .unreadable: return THUMBCACHE_ERROR_UNREADABLE
            case .unsupportedFormat, .decoderNotInProcess, .noTextExtractor, .decodedElsewhere, .noSuchPage: return THUMBCACHE_ERROR_UNSUPPORTED
            case .empty, .tooLarge, .corrupt, .encodingFailed, .noPicture: return THUMBCACHE_ERROR_DECODE
            }
        case let error as GenerationError:
            switch error.reason {
            case .noProvider, .belowMinimumDimension, .noLowQualityImage: return THUMBCACHE_ERROR_UNSUPPORTED
            case .failedBefore, .notWhatItsNameSays: return THUMBCACHE_ERROR_DECODE
            }
        case let error as WorkerFailure:
            // A missing worker program is the installation's fault, not the file's.
            if case .unavailable = error.reason { return THUMBCACHE_ERROR_OTHER }
            return THUMBCACHE_ERROR_DECODE
        case is QueryError: return THUMBCACHE_ERROR_QUERY
        case is StoreError, is IndexError: return THUMBCACHE_ERROR_CACHE
        default: return THUMBCACHE_ERROR_OTHER
        }
    }
}
