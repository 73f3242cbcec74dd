//! The head of an HTTP/1.x request, read without trusting the client: a
//! bounded size, a request line of three parts, the two headers the
//! server reads (`Accept`, `Last-Event-ID`). Sans-IO: bytes in, a head or
//! "not yet" or an error out.

/// The most a request head may take; more is refused (431).
pub const MAX_HEAD: usize = 8 * 1024;

/// What the server reads of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    /// The path, without its query.
    pub path: String,
    pub accept: Option<String>,
    /// An `EventSource` reconnecting: the last event it had.
    pub last_event_id: Option<u64>,
    /// The query's `from=N`: the events a live page already has.
    pub from: Option<u64>,
}

/// Why a request head is refused, with the status it is answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadError {
    /// 400: not an HTTP/1.x request.
    Malformed,
    /// 431: larger than [`MAX_HEAD`].
    TooLarge,
}

impl HeadError {
    pub fn status(self) -> (u16, &'static str) {
        match self {
            HeadError::Malformed => (400, "Bad Request"),
            HeadError::TooLarge => (431, "Request Header Fields Too Large"),
        }
    }

    /// The answer's body: what was wrong with the request.
    pub fn explanation(self) -> &'static [u8] {
        match self {
            HeadError::Malformed => b"not an HTTP/1.x request\n",
            HeadError::TooLarge => b"the request's head is larger than this server reads (8 KiB)\n",
        }
    }
}

/// The head at the start of `input`: `Ok(None)` until its blank line has
/// arrived.
pub fn parse_head(input: &[u8]) -> Result<Option<RequestHead>, HeadError> {
    let Some(end) = input.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if input.len() >= MAX_HEAD { Err(HeadError::TooLarge) } else { Ok(None) };
    };
    if end > MAX_HEAD {
        return Err(HeadError::TooLarge);
    }
    let text = std::str::from_utf8(input.get(..end).unwrap_or_default()).map_err(|_| HeadError::Malformed)?;
    let mut lines = text.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (request_line.next(), request_line.next(), request_line.next(), request_line.next())
    else {
        return Err(HeadError::Malformed);
    };
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic());
    if !token(method) || !target.starts_with('/') || !version.starts_with("HTTP/1.") {
        return Err(HeadError::Malformed);
    }
    let target = target.split('#').next().unwrap_or(target);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let from = query.split('&').find_map(|pair| pair.strip_prefix("from=")).and_then(|n| n.parse().ok());
    let mut head =
        RequestHead { method: method.to_owned(), path: path.to_owned(), accept: None, last_event_id: None, from };
    for line in lines {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("accept") {
            head.accept = Some(value.to_owned());
        } else if name.eq_ignore_ascii_case("last-event-id") {
            head.last_event_id = value.parse().ok();
        }
    }
    Ok(Some(head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_arriving_a_byte_at_a_time_is_read_once_whole() {
        let request = b"GET /metrics?x=1&from=3 HTTP/1.1\r\nHost: a\r\nACCEPT: application/openmetrics-text\r\nLast-Event-ID: 7\r\n\r\nrest";
        let end = request.len() - 4;
        for n in 0..end {
            assert_eq!(parse_head(&request[..n]), Ok(None), "{n} bytes");
        }
        let head = parse_head(request).unwrap().unwrap();
        assert_eq!(head.method, "GET");
        assert_eq!(head.path, "/metrics");
        assert_eq!(head.accept.as_deref(), Some("application/openmetrics-text"));
        assert_eq!(head.last_event_id, Some(7));
        assert_eq!(head.from, Some(3));
    }

    #[test]
    fn what_is_not_http_is_refused() {
        for bad in [
            &b"\r\n\r\n"[..],
            b"GET\r\n\r\n",
            b"GET /x\r\n\r\n",
            b"GET x HTTP/1.1\r\n\r\n",
            b"GET /x HTTP/2\r\n\r\n",
            b"G3T /x HTTP/1.1\r\n\r\n",
            b"GET /x HTTP/1.1 extra\r\n\r\n",
            b"GET /x HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET /\xff HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(parse_head(bad), Err(HeadError::Malformed), "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_head(&vec![b'a'; MAX_HEAD]), Err(HeadError::TooLarge));
        let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
        long.extend(vec![b'a'; MAX_HEAD]);
        long.extend(b"\r\n\r\n");
        assert_eq!(parse_head(&long), Err(HeadError::TooLarge));
    }
}
