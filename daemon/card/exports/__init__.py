"""Exports of the casualty card a receiving facility can use: JSON, FHIR, a printable PDF, 9-line and MIST text."""
