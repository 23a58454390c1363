//! What a streaming answer holds for its client: a queue bounded in bytes
//! between the blocking thread that makes the answer and the HTTP/2 stream
//! that sends it. A client that reads slowly makes the maker wait (without
//! the index held: see `engine::read::ChunkSink`); a client that takes
//! nothing for [`Outbox::new`]'s `patience` is cut off with
//! RESOURCE_EXHAUSTED "the client stopped reading", and what was queued
//! for it is freed at once. Before this, Search queued its whole answer
//! for a client that never read (hundreds of MB for `*` at 1M entries).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio_stream::Stream;
use tonic::Status;

/// Bytes a stream may hold for its client beyond what HTTP/2 flow control
/// already has in flight. A message larger than this still goes, alone
/// (a chunk of 1,024 search results is 100-500 KB). 256 KiB rather than
/// 1 MiB: the same speed for whole answers, and 40 streams nobody read
/// left 45 MiB resident after them instead of 52 (benches/hostile.py).
pub const STREAM_BUFFER_BYTES: usize = 256 << 10;

/// How long a stream waits for a client that takes nothing (default of
/// `fsindexd --slow-reader-secs`).
pub const SLOW_READER: Duration = Duration::from_secs(30);

struct State<T> {
    queue: VecDeque<(Result<T, Status>, usize)>,
    bytes: usize,
    /// When the client last took a message (or the stream began).
    last_take: Instant,
    /// The sending half is gone: the stream ends after the queue.
    finished: bool,
    /// The client is gone (the receiving half was dropped).
    gone: bool,
    /// Cut off: this status goes out next, then the end.
    cut: Option<Status>,
    waker: Option<Waker>,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    room: Condvar,
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // A panic while holding this lock leaves plain data behind.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The maker's half (used on a blocking thread).
pub struct Outbox<T> {
    shared: Arc<Shared<T>>,
    patience: Duration,
}

/// The client's half: the response stream.
pub struct Inbox<T> {
    shared: Arc<Shared<T>>,
}

/// What became of a message offered without waiting.
pub enum Offer<T> {
    Queued,
    /// No room: the message comes back.
    Full(T),
    /// The client went away, or was cut off.
    Gone,
}

impl<T> Outbox<T> {
    /// A bounded outbox and its stream; a client that takes nothing for
    /// `patience` is cut off.
    pub fn new(patience: Duration) -> (Outbox<T>, Inbox<T>) {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                bytes: 0,
                last_take: Instant::now(),
                finished: false,
                gone: false,
                cut: None,
                waker: None,
            }),
            room: Condvar::new(),
        });
        (
            Outbox {
                shared: shared.clone(),
                patience,
            },
            Inbox { shared },
        )
    }

    /// Queues `item` (`bytes` long, encoded) if there is room, without
    /// waiting. An empty queue always takes it, whatever its size.
    pub fn offer(&self, item: T, bytes: usize) -> Offer<T> {
        let mut s = self.shared.lock();
        if s.gone || s.cut.is_some() {
            return Offer::Gone;
        }
        if s.bytes > 0 && s.bytes + bytes > STREAM_BUFFER_BYTES {
            return Offer::Full(item);
        }
        s.bytes += bytes;
        s.queue.push_back((Ok(item), bytes));
        if let Some(w) = s.waker.take() {
            w.wake();
        }
        Offer::Queued
    }

    /// Ends the answer with `status` (after what is queued), room or not.
    pub fn fail(&self, status: Status) {
        let mut s = self.shared.lock();
        s.queue.push_back((Err(status), 0));
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }

    /// Whether a message of `bytes` would be queued now; `None` when the
    /// client is gone (only the maker adds, so the answer holds until it
    /// offers).
    pub fn has_room(&self, bytes: usize) -> Option<bool> {
        let s = self.shared.lock();
        if s.gone || s.cut.is_some() {
            return None;
        }
        Some(s.bytes == 0 || s.bytes + bytes <= STREAM_BUFFER_BYTES)
    }

    /// Waits until the queue is at most half full. False when the client
    /// went away, or took nothing for the patience given (it is then cut
    /// off: what was queued is dropped and RESOURCE_EXHAUSTED goes out).
    pub fn wait_room(&self) -> bool {
        let mut s = self.shared.lock();
        loop {
            if s.gone || s.cut.is_some() {
                return false;
            }
            if s.bytes <= STREAM_BUFFER_BYTES / 2 {
                return true;
            }
            let waited = s.last_take.elapsed();
            if waited >= self.patience {
                s.queue.clear();
                s.bytes = 0;
                s.cut = Some(Status::resource_exhausted(format!(
                    "the client stopped reading: it took nothing of this answer for {} s",
                    self.patience.as_secs()
                )));
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
                tracing::info!(
                    secs = self.patience.as_secs(),
                    "cut off a stream whose client stopped reading"
                );
                return false;
            }
            s = self
                .shared
                .room
                .wait_timeout(s, self.patience - waited)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// Queues `item`, waiting for room as [`Outbox::wait_room`] does. False
    /// when the client is gone or was cut off.
    pub fn send(&self, item: T, bytes: usize) -> bool {
        let mut item = item;
        loop {
            match self.offer(item, bytes) {
                Offer::Queued => return true,
                Offer::Gone => return false,
                Offer::Full(back) => {
                    item = back;
                    if !self.wait_room() {
                        return false;
                    }
                }
            }
        }
    }

    /// Whether the client is gone (or was cut off).
    pub fn is_gone(&self) -> bool {
        let s = self.shared.lock();
        s.gone || s.cut.is_some()
    }
}

impl<T> Drop for Outbox<T> {
    fn drop(&mut self) {
        let mut s = self.shared.lock();
        s.finished = true;
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }
}

impl<T> Stream for Inbox<T> {
    type Item = Result<T, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut s = self.shared.lock();
        if let Some(status) = s.cut.take() {
            // Cut off: the status, then the end (`gone` keeps the maker out).
            s.gone = true;
            s.finished = true;
            return Poll::Ready(Some(Err(status)));
        }
        if let Some((item, bytes)) = s.queue.pop_front() {
            s.bytes -= bytes;
            s.last_take = Instant::now();
            self.shared.room.notify_all();
            return Poll::Ready(Some(item));
        }
        if s.finished {
            return Poll::Ready(None);
        }
        s.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl<T> Drop for Inbox<T> {
    fn drop(&mut self) {
        let mut s = self.shared.lock();
        s.gone = true;
        s.queue.clear();
        s.bytes = 0;
        self.shared.room.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_stream::StreamExt;

    #[tokio::test]
    async fn holds_at_most_its_bytes_and_cuts_off_a_client_that_takes_nothing() {
        let (tx, mut rx) = Outbox::<u32>::new(Duration::from_millis(200));
        let maker = std::thread::spawn(move || {
            let mut sent = 0;
            for i in 0..100u32 {
                if !tx.send(i, 64 << 10) {
                    break;
                }
                sent += 1;
            }
            sent
        });
        // Nothing is taken: four 64 KiB messages fit, then the cut.
        let sent = tokio::task::spawn_blocking(move || maker.join().unwrap())
            .await
            .unwrap();
        assert_eq!(sent, 4);
        let first = rx.next().await.unwrap();
        let status = first.expect_err("the queue was dropped at the cut");
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert!(status.message().contains("the client stopped reading"));
        assert!(rx.next().await.is_none());
    }

    #[tokio::test]
    async fn a_reader_gets_everything_in_order() {
        let (tx, rx) = Outbox::<u32>::new(Duration::from_secs(10));
        let maker = std::thread::spawn(move || {
            for i in 0..1000u32 {
                assert!(tx.send(i, 16 << 10));
            }
        });
        let got: Vec<u32> = rx.map(|r| r.unwrap()).collect().await;
        maker.join().unwrap();
        assert_eq!(got, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn a_large_message_goes_alone_and_a_gone_client_stops_the_maker() {
        let (tx, rx) = Outbox::<u32>::new(Duration::from_secs(10));
        assert!(matches!(
            tx.offer(1, STREAM_BUFFER_BYTES * 3),
            Offer::Queued
        ));
        assert!(matches!(tx.offer(2, 1), Offer::Full(2)));
        drop(rx);
        assert!(matches!(tx.offer(3, 1), Offer::Gone));
        assert!(!tx.wait_room());
        assert!(tx.is_gone());
    }
}
