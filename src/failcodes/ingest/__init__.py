"""Ingest adapters: pipeline output files -> failcodes traces and labels."""
