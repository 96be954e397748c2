import CCurl
import Foundation
import Synchronization

/// The production `HTTPClient`: libcurl bound directly.
///
/// One easy handle per transport (a flow runner's own, or a batch worker's for its runs one after another), so a
/// flow's requests reuse their connection; a process-wide share handle lends connection and DNS caches to parallel
/// runners. Transfers are blocking curl calls, so each transport runs them on a worker thread — never on Swift's
/// cooperative pool, and never waiting for a shared dispatch thread that other blocking work may be holding.
public final class CurlTransport: HTTPClient, @unchecked Sendable {
    // @unchecked: `handle` is only touched on `worker`, which runs one job at a time.
    private let handle: UnsafeMutableRawPointer
    private let worker: WorkerThread
    /// Whether `worker` is this transport's own, stopped with it (else a batch worker's, lent for the worker's runs).
    private let ownsWorker: Bool
    /// The proxy and the certificates each transfer uses.
    private let options: NetworkOptions

    /// `thread`: a worker thread the caller already runs on and keeps (a batch's worker, for its runs one after
    /// another), so that the runs' steps, their transfers and what the batch does between runs share one thread — no
    /// thread started and stopped per run, no hop between two at its start and end. Without one the transport starts
    /// its own.
    public init(options: NetworkOptions, on thread: WorkerThread? = nil) {
        self.options = options
        worker = thread ?? WorkerThread(name: "checkout-driver.curl")
        ownsWorker = thread == nil
        _ = CurlGlobal.initialized
        guard let h = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        handle = h
    }

    deinit {
        if ownsWorker { worker.stop() }
        curl_easy_cleanup(handle)
    }

    /// Flow runners prefer this executor, so their steps run on the transfer thread itself.
    public var preferredExecutor: (any TaskExecutor)? { worker }

    /// Cancelling the calling task (an interrupted run) aborts the transfer within about a second: libcurl asks
    /// the progress callback at least that often, and it answers "abort" once the task is cancelled.
    public func send(_ request: HTTPClientRequest) async throws(TransportError) -> HTTPClientResponse {
        let abort = AbortFlag()
        let result: Result<HTTPClientResponse, TransportError> = await withTaskCancellationHandler {
            if worker.isCurrent { return perform(request, abort: abort) }
            return await withCheckedContinuation { continuation in
                worker.submit { continuation.resume(returning: self.perform(request, abort: abort)) }
            }
        } onCancel: {
            abort.raise()
        }
        return try result.get()
    }

    /// Runs one transfer synchronously on the caller's thread (the transport's queue).
    private func perform(_ request: HTTPClientRequest, abort: AbortFlag) -> Result<HTTPClientResponse, TransportError> {
        if abort.isRaised { return .failure(.cancelled(sent: false)) }
        let h = handle
        // Reset clears options but keeps the live connection, so keep-alive survives across requests.
        curl_easy_reset(h)
        let sink = TransferSink(abort: abort)
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer { curl_slist_free_all(headerList) }
        for (name, value) in request.headers {
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }
        // curl would add `Expect: 100-continue` to larger bodies (one round trip more) and a form
        // content type to POSTs; the driver states every header it means to send.
        if request.headers["Expect"] == nil { headerList = curl_slist_append(headerList, "Expect:") }
        if request.headers["Content-Type"] == nil { headerList = curl_slist_append(headerList, "Content-Type:") }

        let body = request.body ?? Data()
        return body.withUnsafeBytes { bodyBytes -> Result<HTTPClientResponse, TransportError> in
            errorBuffer.withUnsafeMutableBufferPointer { errorPointer in
                ccurl_setopt_string(h, CURLOPT_URL, request.url)
                let proxy = options.apply(to: h, url: request.url)
                ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
                ccurl_setopt_share(h, CurlGlobal.share.handle)
                // The shared connection cache holds every parallel runner's connection; with libcurl's default
                // limit (5) each finished transfer would close the oldest idle one, so beyond five runners no
                // connection survives to be reused.
                ccurl_setopt_long(h, CURLOPT_MAXCONNECTS, CurlGlobal.maxConnections)
                ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, max(1, Int(request.timeout * 1000)))
                ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(min(request.timeout, 10) * 1000)))
                ccurl_setopt_long(h, CURLOPT_TCP_NODELAY, 1)
                // Which requests may go out on a kept-alive connection is the retry policy's rule (see
                // `RetryPolicy.mayReuseConnection`); the others get a fresh one.
                if !RetryPolicy.mayReuseConnection(request) { ccurl_setopt_long(h, CURLOPT_FRESH_CONNECT, 1) }
                // libcurl would silently send a request again on a fresh connection when the kept one died before any
                // answer byte, though the server may have acted on the first. Its second request is refused here, so
                // the transfer fails as a lost connection and the engine decides — counted, logged and rebuilt (a
                // fresh Bn-Request-Id, the same idempotency key) — whether to send it again.
                ccurl_setopt_prereq_function(h, curlBeforeRequest)
                ccurl_setopt_pointer(h, CURLOPT_PREREQDATA, sinkPointer)
                ccurl_setopt_pointer(h, CURLOPT_ERRORBUFFER, errorPointer.baseAddress)
                ccurl_setopt_slist(h, CURLOPT_HTTPHEADER, headerList)
                ccurl_setopt_write_function(h, curlWriteBody)
                ccurl_setopt_pointer(h, CURLOPT_WRITEDATA, sinkPointer)
                ccurl_setopt_header_function(h, curlWriteHeader)
                ccurl_setopt_pointer(h, CURLOPT_HEADERDATA, sinkPointer)
                ccurl_setopt_xferinfo_function(h, curlProgress)
                ccurl_setopt_pointer(h, CURLOPT_XFERINFODATA, sinkPointer)
                ccurl_setopt_long(h, CURLOPT_NOPROGRESS, 0)
                switch request.method {
                case "GET" where request.body == nil:
                    ccurl_setopt_long(h, CURLOPT_HTTPGET, 1)
                case "HEAD":
                    ccurl_setopt_long(h, CURLOPT_NOBODY, 1)
                default:
                    ccurl_setopt_string(h, CURLOPT_CUSTOMREQUEST, request.method)
                    if request.body != nil || request.method == "POST" || request.method == "PUT"
                        || request.method == "PATCH"
                    {
                        ccurl_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyBytes.count))
                        ccurl_setopt_pointer(
                            h, CURLOPT_POSTFIELDS,
                            UnsafeMutableRawPointer(mutating: bodyBytes.baseAddress ?? UnsafeRawPointer(sinkPointer)))
                    }
                }

                let code = curl_easy_perform(h)
                guard code == CURLE_OK else {
                    if sink.resendRefused {
                        return .failure(.connectionLost("the kept-alive connection closed before an answer came"))
                    }
                    let detail = String(cString: errorPointer.baseAddress!)
                    let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
                    // A tunnel the proxy would not open: the request never reached the service.
                    var connect = 0
                    ccurl_getinfo_long(h, CURLINFO_HTTP_CONNECTCODE, &connect)
                    if proxy != nil && (code == CURLE_PROXY || connect >= 300) {
                        return .failure(
                            .proxyRefused(connect > 0 ? "CONNECT answered \(connect): \(message)" : message))
                    }
                    return .failure(CurlTransport.classify(code, message: message))
                }
                var status = 0
                ccurl_getinfo_long(h, CURLINFO_RESPONSE_CODE, &status)
                // Only a proxy answers 407: a plain-HTTP request went no further than it (inside an https tunnel, a 407
                // would be the service's own answer).
                if proxy != nil && status == 407 && request.url.lowercased().hasPrefix("http://") {
                    return .failure(.proxyRefused("407 Proxy Authentication Required"))
                }
                var connects = 0
                ccurl_getinfo_long(h, CURLINFO_NUM_CONNECTS, &connects)
                return .success(
                    HTTPClientResponse(
                        status: status, headers: sink.headers, body: sink.body, httpVersion: sink.httpVersion,
                        timings: CurlTransport.timings(h), reusedConnection: connects == 0))
            }
        }
    }

    private static func timings(_ h: UnsafeMutableRawPointer) -> PhaseTimings {
        func seconds(_ info: CURLINFO) -> Double {
            var v: curl_off_t = 0
            ccurl_getinfo_off(h, info, &v)
            return Double(v) / 1_000_000
        }
        let dns = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        let connect = seconds(CURLINFO_CONNECT_TIME_T)
        let tls = seconds(CURLINFO_APPCONNECT_TIME_T)
        let pretransfer = seconds(CURLINFO_PRETRANSFER_TIME_T)
        let firstByte = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        let total = seconds(CURLINFO_TOTAL_TIME_T)
        var t = PhaseTimings()
        t.dns = dns
        t.connect = max(0, connect - dns)
        t.tls = tls > 0 ? max(0, tls - connect) : 0
        t.send = max(0, pretransfer - max(connect, tls))
        t.wait = max(0, firstByte - pretransfer)
        t.receive = max(0, total - firstByte)
        t.total = total
        return t
    }

    /// The messages leave the URL out: every place that shows one (a diagnostic, the trace, HAR) names the request.
    private static func classify(_ code: CURLcode, message: String) -> TransportError {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            .unreachable(message)
        case CURLE_OPERATION_TIMEDOUT:
            .timedOut(message)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            .invalidRequest(message)
        // The handshake comes before the request: a certificate refused sent nothing, and asking again changes nothing.
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            .tlsRefused(message)
        // Nor did a handshake that failed otherwise (a reset, a protocol error), which may pass: asked again.
        case CURLE_SSL_CONNECT_ERROR:
            .unreachable("TLS handshake failed: \(message)")
        case CURLE_ABORTED_BY_CALLBACK:
            .cancelled(sent: true)
        default:
            .connectionLost(message)
        }
    }
}

/// Collects one transfer's response. Reached from C callbacks through an unretained pointer; the
/// transfer is synchronous, so it outlives every callback.
private final class TransferSink {
    var body = Data()
    var headers = HTTPHeaders()
    var httpVersion = "HTTP/1.1"
    /// Requests libcurl was about to write for this transfer: more than one is its own resend, which is refused.
    var requestsStarted = 0
    var resendRefused = false
    let abort: AbortFlag
    init(abort: AbortFlag) { self.abort = abort }
}

/// Raised from the cancelling thread, read by libcurl's progress callback on the transfer's thread.
private final class AbortFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .releasing) }
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}

/// Non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
private let curlProgress: ccurl_xferinfo_callback = { userdata, _, _, _, _ in
    Unmanaged<TransferSink>.fromOpaque(userdata!).takeUnretainedValue().abort.isRaised ? 1 : 0
}

/// Called just before libcurl writes the request on a connection; a second call in one transfer is a resend.
private let curlBeforeRequest: ccurl_prereq_callback = { userdata, _, _, _, _ in
    let sink = Unmanaged<TransferSink>.fromOpaque(userdata!).takeUnretainedValue()
    sink.requestsStarted += 1
    guard sink.requestsStarted == 1 else {
        sink.resendRefused = true
        return Int32(CURL_PREREQFUNC_ABORT)
    }
    return Int32(CURL_PREREQFUNC_OK)
}

private let curlWriteBody: ccurl_data_callback = { pointer, size, count, userdata in
    let sink = Unmanaged<TransferSink>.fromOpaque(userdata!).takeUnretainedValue()
    let n = size * count
    if let pointer { sink.body.append(UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: n) }
    return n
}

private let curlWriteHeader: ccurl_data_callback = { pointer, size, count, userdata in
    let sink = Unmanaged<TransferSink>.fromOpaque(userdata!).takeUnretainedValue()
    let n = size * count
    guard let pointer else { return n }
    // Header lines arrive one per call; split on the first colon and trim spaces and CRLF by hand,
    // which is much cheaper than Foundation's trimming for every header of every response.
    let line = UnsafeRawBufferPointer(start: pointer, count: n).bindMemory(to: UInt8.self)
    var end = line.count
    while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D || line[end - 1] == 0x20 { end -= 1 }
    guard end > 0 else { return n }
    if end >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
        line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
    {
        // A new status line (after a 100 Continue, say) starts a new header block.
        sink.headers = HTTPHeaders()
        let space = line[..<end].firstIndex(of: 0x20) ?? end
        sink.httpVersion = String(decoding: line[..<space], as: UTF8.self)
    } else if let colon = line[..<end].firstIndex(of: UInt8(ascii: ":")) {
        var valueStart = colon + 1
        while valueStart < end, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
        sink.headers.add(
            String(decoding: line[..<colon], as: UTF8.self), String(decoding: line[valueStart..<end], as: UTF8.self))
    }
    return n
}

/// libcurl's process-wide state: global init and the share handle that parallel runners use for
/// their connection and DNS caches.
enum CurlGlobal {
    static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        return true
    }()
    static let share = CurlShare()
    /// Room in the shared connection cache: well above the most parallel runners a batch uses.
    static let maxConnections = 256
}

final class CurlShare: @unchecked Sendable {
    // @unchecked: libcurl calls the lock callbacks from many threads; the mutexes are what make it safe.
    let handle: UnsafeMutableRawPointer
    private let locks: [NSLock] = (0..<Int(CURL_LOCK_DATA_LAST.rawValue)).map { _ in NSLock() }

    init() {
        _ = CurlGlobal.initialized
        handle = curl_share_init()!
        ccurl_share_lock_data(handle, CURL_LOCK_DATA_DNS)
        ccurl_share_lock_data(handle, CURL_LOCK_DATA_CONNECT)
        ccurl_share_lock_data(handle, CURL_LOCK_DATA_SSL_SESSION)
        ccurl_share_set_userdata(handle, Unmanaged.passUnretained(self).toOpaque())
        ccurl_share_set_lock(handle) { _, data, _, user in
            Unmanaged<CurlShare>.fromOpaque(user!).takeUnretainedValue().locks[Int(data.rawValue)].lock()
        }
        ccurl_share_set_unlock(handle) { _, data, user in
            Unmanaged<CurlShare>.fromOpaque(user!).takeUnretainedValue().locks[Int(data.rawValue)].unlock()
        }
    }
}
