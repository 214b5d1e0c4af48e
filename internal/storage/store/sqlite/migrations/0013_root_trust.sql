-- Each root's trust (capability.Trust), which every skill under it has.
-- Roots recorded before trust existed were never trusted more than an
-- import.
ALTER TABLE roots ADD COLUMN trust TEXT NOT NULL DEFAULT 'imported';
