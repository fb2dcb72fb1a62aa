/**
 * The record feed between a streamed file's mapper and the send loop (push/feed.ts): what the send loop may read,
 * when it waits, and the back-pressure that keeps the mapper a bounded lead ahead of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStreamFeed } from '../../src/push/feed.js';

/** whether a promise has settled after the current microtasks ran */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

test('a streamed file is readable up to its last published record only; next() waits for the next publication', async () => {
  const feed = createStreamFeed();
  feed.add(7, 'Category');
  assert.equal(feed.published({ fileId: 7, id: 1 }), false);
  assert.equal(feed.published({ fileId: 3, id: 99 }), true, 'a file that does not stream is readable whole');
  assert.equal(feed.open(['Category']), true);
  assert.equal(feed.open(['Product']), false);
  const more = feed.next();
  assert.equal(await settled(more), false);
  feed.publish(7, 10);
  assert.equal(await settled(more), true);
  assert.equal(feed.published({ fileId: 7, id: 10 }), true);
  assert.equal(feed.published({ fileId: 7, id: 11 }), false);
  feed.end(7);
  assert.equal(feed.open(['Category']), false);
  assert.equal(await settled(feed.next()), true, 'nothing open: next() settles at once');
});

test('back-pressure: the mapper waits while more than the lead is published and not taken, and goes on as the send loop takes records', async () => {
  const feed = createStreamFeed();
  feed.add(1, 'Category');
  feed.publish(1, 1000);
  const room = feed.room(1, 400);
  assert.equal(await settled(room), false, '1,000 published, none taken, lead 400: the mapper waits');
  feed.taken({ fileId: 1, id: 500 });
  assert.equal(await settled(room), false, '500 untaken is still more than the lead');
  feed.taken({ fileId: 1, id: 300 });
  assert.equal(await settled(room), false, 'an older id does not move the mark back or forward');
  feed.taken({ fileId: 1, id: 600 });
  assert.equal(await settled(room), true, '400 untaken: room');
  assert.equal(await settled(feed.room(1, 400)), true, 'within the lead: no wait');
});

test('back-pressure never blocks a send loop that waits for a publication (records all rejected, a later tier) or stopped', async () => {
  const feed = createStreamFeed();
  feed.add(1, 'Product');
  feed.publish(1, 5000);
  const room = feed.room(1, 100);
  assert.equal(await settled(room), false);
  const more = feed.next(); // the send loop found nothing more to read: it waits for the mapper
  assert.equal(await settled(room), true, 'the send loop waits: the mapper must go on');
  feed.publish(1, 6000);
  assert.equal(await settled(more), true);
  const again = feed.room(1, 100);
  assert.equal(await settled(again), false, 'the send loop reads again: the lead applies again');
  feed.release();
  assert.equal(await settled(again), true, 'the send loop stopped: nothing waits for it');
  assert.equal(await settled(feed.room(1, 100)), true);
});

test('back-pressure: an aborted run does not leave the mapper waiting', async () => {
  const feed = createStreamFeed();
  feed.add(1, 'Category');
  feed.publish(1, 1000);
  const ac = new AbortController();
  const room = feed.room(1, 10, ac.signal);
  assert.equal(await settled(room), false);
  ac.abort();
  assert.equal(await settled(room), true);
});
