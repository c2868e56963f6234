/**
 * The handoff at the physical limit: a waiter woken by its holder's release holds the lock with
 * no further request.
 *
 * The protocol. A contender node of a mutex (role 'lock': Mutex, NonReentrantMutex, the mutexes
 * of MultiLock and Semaphore) is created with owner data carrying `handoff: 'marker'`, its
 * creator's promise that the node's data changes only in its holder's release. Nothing else in
 * zklock writes such a node (the only other write of a contender, the read/write lock's downgrade,
 * is of a writer of role 'rw', whose owner data never carries the promise). Its holder releases
 * with ONE multi: `setData(node, RELEASE_MARKER, version)` then `delete(node, version + 1)`. A
 * waiter that read that owner data when it set its data watch on the node (watchOnce's getData)
 * and then hears `dataChanged` for it holds the lock at once.
 *
 * Why the event says the node held. The server applies a multi's sub-operations in order inside
 * one transaction (DataTree.processTxn, case OpCode.multi, each sub-txn through processTxn):
 * setData triggers the node's data watches with NodeDataChanged (DataTree.setData), consuming each
 * one-shot watch (WatchManager.triggerWatch removes it), so the delete that follows finds none of
 * ours and we hear NodeDataChanged only. By the promise, a data change on a node whose owner
 * data we read with the promise in it is that multi, which only a holder sends: a lease is made
 * only after its node's wait ended with nothing ahead (or tryAcquire found nothing ahead).
 *
 * Why nothing ahead of us remains. The watched node N is the nearest contender ahead of us in our
 * first listing. N held, so every node created before N was gone when N held, and a gone node does
 * not come back (our first listing bounds everything that can block us: new nodes sort after us).
 * Nodes between N and us in sequence order: none in our listing, taken after our create, and none
 * can be created later with a smaller sequence. N itself is gone in the same transaction that woke
 * us. So nothing blocks us: we hold.
 *
 * Cases that do not use the fast path, and why they stay safe:
 * - A plain NodeDeleted (session expiry or close, an aborted waiter deleting its node, a Curator
 *   or kazoo holder, a zklock of an older version, a marker refused and replaced by a plain delete):
 *   the waiter goes on as before, checking the rest of its first listing (stillBlocking).
 * - A node whose owner data lacks the promise (another library, an older zklock, a read/write
 *   writer in kazoo's names, which are a mutex's names too): `dataChanged` means what it always
 *   did, look again.
 * - A reconnect. A watch event is delivered in the order the server committed, a reconnect or not.
 *   After a disconnect the client re-registers the watch with setWatches at its last zxid seen
 *   (DataTree.setWatches): a node gone by then answers NodeDeleted, so a marker release made while
 *   we were away takes the plain path; NodeDataChanged comes for a node that exists with a newer
 *   mzxid. Our last zxid is at least N's czxid (we listed N before), so that means N's data changed
 *   after its creation: by the promise, only in the marker multi, which deletes N in the same
 *   transaction, so N exists with a newer mzxid never. Either way a `dataChanged` still means N held.
 * - Our own node deleted meanwhile (an operator): watchOwnNode's watch was set before N's, and the
 *   server notifies in commit order, so its deletion is heard before N's release and the waiter
 *   queues again (NodeLost), fast path or not.
 * - The releasing holder's own lease monitor watches its node with getData too: it is stopped
 *   before the release is sent and ignores the event (and the same client's waiter watching a
 *   node of its own session hears the same event, which means the same thing).
 * - A persistent watch of the same session on the path serves our one-shot watch client-side
 *   (client/watch-manager.ts): it delivers dataChanged for the setData before deleted, the same.
 *
 * Assumptions, outside the protocol every contender follows (like deleting a holder's node by hand,
 * see sequence-proof.ts): nobody but a releasing zklock holder writes the data of a node carrying
 * the promise; no Curator or kazoo recipe ever writes a contender node's data (their mutexes do not).
 *
 * Peers. Curator's and kazoo's waiters watch their predecessor and, on any event, list the queue
 * again: our NodeDataChanged wakes them to check, which is all a NodeDeleted did.
 *
 * Across connection loss the release's multi is retried (deleteGuaranteed): NONODE at the
 * setData means our node is gone (the multi ran, or the session ended); any other refusal of
 * the setData (BADVERSION: someone wrote our node; NOAUTH) drops the marker for a plain delete,
 * whose NodeDeleted sends waiters down the plain path.
 */
export const RELEASE_MARKER = Buffer.from('zklock:released');
