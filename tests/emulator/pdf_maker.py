"""PDFs made at test time: pages of text (Helvetica), optionally an image stream of N bytes on the
first page. Written by hand (objects, cross-reference table, trailer) so the tests need no PDF writer."""

from __future__ import annotations

import base64
import os

LETTER = (612, 792)  # US Letter in PDF points


def make_pdf(pages: list[str], size: tuple[int, int] = LETTER, image_bytes: int = 0) -> bytes:
    """A PDF with one page per string (lines split on newlines, 12-point text)."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    tree = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    image = 0
    if image_bytes:
        data = os.urandom(image_bytes)
        image = add(b"<< /Type /XObject /Subtype /Image /Width 1000 /Height %d /ColorSpace /DeviceGray "
                    b"/BitsPerComponent 8 /Length %d >>\nstream\n" % (max(1, image_bytes // 1000), len(data))
                    + data + b"\nendstream")
    kids = []
    for n, text in enumerate(pages):
        lines = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in text.split("\n")]
        ops = b"BT /F1 12 Tf 14 TL 40 %d Td " % (size[1] - 50) + b" ".join(
            b"(%s) '" % line.encode("latin-1") for line in lines) + b" ET"
        if image and n == 0:
            ops += b" q 100 0 0 100 40 40 cm /Im1 Do Q"
        content = add(b"<< /Length %d >>\nstream\n" % len(ops) + ops + b"\nendstream")
        xobject = b" /XObject << /Im1 %d 0 R >>" % image if image and n == 0 else b""
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
                        b"/Resources << /Font << /F1 %d 0 R >>%s >> >>" % (tree, size[0], size[1], content, font, xobject)))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    objects[tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref)
    return bytes(out)


def pdf_b64(pages: list[str], **kw) -> str:
    return base64.b64encode(make_pdf(pages, **kw)).decode()


def page_of_text(chars: int = 3_000) -> str:
    """A page of plain prose, about ``chars`` characters, in 90-character lines."""
    words = ("The vendor lists its prices per seat and per month, with a discount for annual plans. " * 60)[:chars]
    return "\n".join(words[k:k + 90] for k in range(0, len(words), 90))
