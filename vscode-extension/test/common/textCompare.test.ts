import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeDisk, diskMatches } from '../../src/common/textCompare';

describe('textCompare', () => {
  it('decodes UTF-8 with and without BOM and UTF-16 with BOM', () => {
    assert.equal(decodeDisk(Buffer.from('héllo')), 'héllo');
    assert.equal(decodeDisk(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a')])), 'a');
    assert.equal(decodeDisk(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi', 'utf16le')])), 'hi');
    const be = Buffer.from('hi', 'utf16le').swap16();
    assert.equal(decodeDisk(Buffer.concat([Buffer.from([0xfe, 0xff]), be])), 'hi');
  });
  it('compares line endings exactly', () => {
    assert.equal(diskMatches(Buffer.from('a\r\nb'), 'a\r\nb'), true);
    assert.equal(diskMatches(Buffer.from('a\nb'), 'a\r\nb'), false);
  });
});
